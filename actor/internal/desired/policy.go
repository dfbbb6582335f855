package desired

import (
	"errors"
	"net/http"
	"time"

	"kubehz.dev/agent/shared/platform"
)

// maxRetryAfter bounds how long a Retry-After can park the poller.
const maxRetryAfter = 5 * time.Minute

// steadyWait is the wait after a 200 or 304: interval plus up to 10 %, so a
// fleet of agents started together drifts apart. A jitter outside [0, 1) is
// held inside it.
func steadyWait(interval time.Duration, jitter float64) time.Duration {
	if !(jitter > 0) { // also catches NaN
		jitter = 0
	}
	jitter = min(jitter, 1)
	return interval + time.Duration(jitter*0.1*float64(interval))
}

// failureWait is the wait after a failed fetch: the backoff step, or the
// platform's Retry-After when that is longer, up to maxRetryAfter. Nothing
// shortens it, auth failures included.
func failureWait(step time.Duration, err error) time.Duration {
	if ra, ok := platform.RetryAfter(err); ok {
		return max(step, min(ra, maxRetryAfter))
	}
	return step
}

// withdrawn reports whether a failed fetch is the platform's answer that
// nothing is authorized any more: a 4xx says the request itself is refused
// (token revoked, cluster gone, endpoint removed), and waiting will not
// change that. A 5xx, a transport error or a 3xx (which the client refuses
// to follow) says nothing about authorization, and neither do 408 and 429,
// which only ask us to come back later.
func withdrawn(err error) bool {
	code, ok := statusCode(err)
	if !ok || code < 400 || code > 499 {
		return false
	}
	return code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

func statusCode(err error) (int, bool) {
	var se *platform.StatusError
	if errors.As(err, &se) {
		return se.Code, true
	}
	return 0, false
}

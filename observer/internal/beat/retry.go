package beat

import (
	"errors"
	"net/http"
	"time"

	"kubehz.dev/agent/shared/platform"
)

// retryPlan is how the send loop waits after a failed heartbeat.
type retryPlan struct {
	wait time.Duration
	// interruptible lets a newer payload end the wait early.
	interruptible bool
}

// planRetry turns a send error and the next backoff step into a wait.
//
// Only transport errors and 5xx other than 503 are cut short by a newer
// payload. Neither says anything about our pace: the request never arrived or
// the server broke while handling it, and the cadence's min-gap already
// bounds how often a newer payload can turn up, so sending it at once keeps
// the platform's view fresh at no risk. Everything else waits the backoff in
// full:
//   - 401/403: a revoked token will not start working because the cluster
//     changed, and hammering with it looks like an attack.
//   - Any other 4xx: the server is rejecting what we send. Cutting the wait
//     short made a persistent 400 repeat at the beat rate
//     (docs/contract.md#g-5); the backoff cap (5 min) bounds how stale the
//     view gets if a newer payload would have been accepted.
//   - 429 and 503: the server asked us to slow down, with or without a
//     Retry-After. When it named a time we wait at least that long.
func planRetry(err error, next time.Duration) retryPlan {
	if after, ok := platform.RetryAfter(err); ok {
		return retryPlan{wait: max(after, next)}
	}
	var se *platform.StatusError
	if !errors.As(err, &se) {
		return retryPlan{wait: next, interruptible: true}
	}
	serverFault := se.Code >= http.StatusInternalServerError && se.Code != http.StatusServiceUnavailable
	return retryPlan{wait: next, interruptible: serverFault}
}

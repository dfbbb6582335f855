// Package platform is the hardened HTTP client for the kubehz platform API.
package platform

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"kubehz.dev/agent/shared/wire"
)

// StatusError is a non-2xx answer from the platform.
type StatusError struct {
	Code int
	// RetryAfter is the wait the platform asked for on a 429 or 503, already
	// clamped to MaxRetryAfter; zero when it asked for none.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("platform answered %d %s (retry after %s)", e.Code, http.StatusText(e.Code), e.RetryAfter)
	}
	return fmt.Sprintf("platform answered %d %s", e.Code, http.StatusText(e.Code))
}

// MaxRetryAfter bounds how long a Retry-After can park the agent, so a
// misconfigured platform cannot silence a cluster for hours.
const MaxRetryAfter = 5 * time.Minute

// IsAuth reports whether err is a 401 or 403: the token is unknown, revoked or
// bound to another cluster.
func IsAuth(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.Code == http.StatusUnauthorized || se.Code == http.StatusForbidden)
}

// RetryAfter returns the wait the platform asked for, if it asked.
func RetryAfter(err error) (time.Duration, bool) {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return se.RetryAfter, true
	}
	return 0, false
}

// Verdict is the availableUpdates tristate from a heartbeat response.
// Present false means "no verdict": touch nothing. Present with an empty,
// non-nil Updates means "nothing is newer": clear.
type Verdict struct {
	Present bool
	Updates []wire.AvailableUpdate
}

// RedirectError is a 3xx answer. The client never follows one: the bearer
// token must reach only the configured URL, and a platform that moved is a
// configuration change for a human, not something to chase.
type RedirectError struct {
	Code int
	// Target is where the platform pointed, cut down to scheme, host and
	// path; "" when it named nowhere usable. The query string is dropped
	// because a log line is no place for whatever it carries.
	Target string
}

func (e *RedirectError) Error() string {
	msg := fmt.Sprintf("platform answered %d %s; redirects are refused", e.Code, http.StatusText(e.Code))
	if e.Target != "" {
		msg += " (it pointed at " + e.Target + ")"
	}
	return msg
}

// Unwrap exposes the status, so a caller that only knows StatusError treats
// a redirect as one more generic non-2xx answer.
func (e *RedirectError) Unwrap() error { return &StatusError{Code: e.Code} }

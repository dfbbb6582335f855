package register

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/utils/clock"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/platform"
)

// Announcer posts one registration body; redact is masked in any logged
// error body. *platform.Registrar is the real one.
type Announcer interface {
	Register(ctx context.Context, body []byte, redact string) error
}

var _ Announcer = (*platform.Registrar)(nil)

// Retry bounds: at most maxAttempts posts, waits of 1 s doubling to 30 s
// (fully jittered), so a platform that is down gives up within about two
// minutes and the Job's own retries take over. A Retry-After is honoured up
// to retryMax too: five waits of the 5 minutes it may ask would outlast the
// Job's activeDeadlineSeconds (900) before its own retries had a turn.
const (
	maxAttempts = 6
	retryBase   = time.Second
	retryMax    = 30 * time.Second
)

// Sleeper waits d or until ctx ends; tests replace the clock with it.
type Sleeper func(ctx context.Context, d time.Duration) error

func sleep(ctx context.Context, d time.Duration) error {
	if !backoff.Sleep(ctx, clock.RealClock{}, d) {
		return ctx.Err()
	}
	return nil
}

// announce posts body until the platform takes it, retrying only what may
// pass later (a network failure, 5xx, 429). Re-posting is safe: the body is
// the same every time and the platform accepts the same hashes again.
func announce(ctx context.Context, a Announcer, body []byte, redact string, wait Sleeper, b *backoff.Backoff, log *slog.Logger) error {
	for attempt := 1; ; attempt++ {
		err := a.Register(ctx, body, redact)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		d, ok := platform.RetryAfter(err)
		if !ok {
			d = b.Next()
		}
		d = min(d, retryMax)
		log.WarnContext(ctx, "Registration did not reach the platform; retrying (check KUBEHZ_API_URL and the network path to it)",
			"attempt", attempt, "retryIn", d.String(), "err", err)
		if err := wait(ctx, d); err != nil {
			return err
		}
	}
}

// retryable says whether a failed post may pass later: a 5xx, a 429, or no
// answer at all. A post that ran out its own request timeout is no answer
// (its error matches context.DeadlineExceeded too), so it is retried; only
// the end of the caller's ctx, which announce checks first, stops the loop.
func retryable(err error) bool {
	var se *platform.StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests
	}
	return true
}

// explain turns a refusal into what the operator should check; other
// errors pass through.
func explain(err error, clusterID, namespace, secret string) error {
	var se *platform.StatusError
	if !errors.As(err, &se) {
		return err
	}
	var hint string
	switch se.Code {
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		hint = fmt.Sprintf("the platform refused the request; check that CLUSTER_ID %q is the cluster's id on the platform", clusterID)
	case http.StatusUnauthorized, http.StatusForbidden:
		hint = fmt.Sprintf("the platform wants proof this cluster may register: check Secret %s/%s (key %s) holds the bind secret the platform issued, and that it was not already used",
			namespace, BindSecretName, BindKey)
	case http.StatusNotFound:
		hint = fmt.Sprintf("the platform does not know cluster %q or the endpoint; check CLUSTER_ID and KUBEHZ_API_URL", clusterID)
	case http.StatusConflict:
		hint = fmt.Sprintf("cluster %q is already registered with a different agent token; Secret %s/%s was replaced or deleted after registering. "+
			"Restore the original Secret, or release the cluster on the platform before registering again", clusterID, namespace, secret)
	default:
		return err
	}
	return fmt.Errorf("%w: %s", err, hint)
}

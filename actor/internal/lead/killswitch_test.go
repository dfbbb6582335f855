package lead

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// The guard's watch never reports the delete here (it lags, as after an
// apiserver restart or on a half-open connection): the write path alone
// must see the Deployment gone, refuse the write, end the term and release.
func TestRun_WriteFindsTheDeploymentGoneWhileTheWatchLags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(actorDeployment(false))
		events := &journal{}
		journalReleases(client, events)
		never := make(chan struct{}) // the lagging guard
		var firstErr, secondErr error
		work := func(ctx context.Context, f *Fence) error {
			if err := client.AppsV1().Deployments(testNamespace).Delete(ctx, testDeployment, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete the Deployment: %v", err)
			}
			_, _, firstErr = f.Write(ctx)
			<-ctx.Done()
			_, _, secondErr = f.Write(context.Background())
			events.add("work returned")
			return ctx.Err()
		}
		r := startRun(t, candidate(client, "a"), never, work)
		err := r.wait(t, time.Second)

		if !errors.Is(err, ErrFenced) {
			t.Errorf("Run = %v, want ErrFenced", err)
		}
		if !errors.Is(firstErr, ErrFenced) || !errors.Is(secondErr, ErrFenced) {
			t.Errorf("writes after the delete = %v, %v; want ErrFenced twice", firstErr, secondErr)
		}
		if got, want := events.list(), []string{"work returned", "lease released"}; !slices.Equal(got, want) {
			t.Errorf("events = %q, want %q", got, want)
		}
		if got := holderOf(t, client); got != "" {
			t.Errorf("lease holder after fencing = %q, want none", got)
		}
	})
}

// A stopped or stalled process whose write was fenced just before the
// freeze resumes after its deadline: the request must never leave.
func TestSendGuard_WriteFencedBeforeAFreezeIsNotSentAfterIt(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	client := fake.NewClientset(actorDeployment(false), heldLease("me", now.Add(-time.Second), 15))
	f := newFence(client, testNamespace, testLease, testDeployment, "me")
	f.now = func() time.Time { return now }
	wctx, cancel, err := f.Write(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	deadline, _ := wctx.Deadline()

	for _, tc := range []struct {
		name     string
		at       time.Time
		wantSent bool
	}{
		{"one nanosecond before the deadline is sent", deadline.Add(-time.Nanosecond), true},
		{"exactly at the deadline is refused", deadline, false},
		{"thawed 20 s later, after a successor took over, is refused", now.Add(20 * time.Second), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &countingTransport{}
			guard := &sendGuard{next: next, now: func() time.Time { return tc.at }}
			body := &closeRecorder{}
			req, _ := http.NewRequestWithContext(wctx, http.MethodPatch, "https://apiserver/apis/x", body)
			_, err := guard.RoundTrip(req)
			if sent := next.calls == 1; sent != tc.wantSent {
				t.Fatalf("sent = %v, want %v (err %v)", sent, tc.wantSent, err)
			}
			if !tc.wantSent && (!errors.Is(err, ErrPastDeadline) || !body.closed) {
				t.Errorf("refusal err = %v, body closed = %v; want ErrPastDeadline and a closed body", err, body.closed)
			}
		})
	}
}

func TestSendGuard_RequestWithoutADeadlineIsSent(t *testing.T) {
	next := &countingTransport{}
	req, _ := http.NewRequest(http.MethodGet, "https://apiserver/api", nil)
	if _, err := SendGuard(next).RoundTrip(req); err != nil || next.calls != 1 {
		t.Fatalf("calls %d, err %v; want the request sent", next.calls, err)
	}
}

type countingTransport struct{ calls int }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.calls++
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

type closeRecorder struct{ closed bool }

func (c *closeRecorder) Read([]byte) (int, error) { return 0, io.EOF }
func (c *closeRecorder) Close() error             { c.closed = true; return nil }

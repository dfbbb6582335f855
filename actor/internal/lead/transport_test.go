package lead

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/token"
)

func TestDeadlineTransport_RefusesATermsWorkOnceItWentTenSecondsWithoutARenewal(t *testing.T) {
	sent := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	won := &term{}
	won.renewed(sent)
	for _, tc := range []struct {
		name     string
		term     *term // nil: a request outside any term
		at       time.Time
		wantSent bool
	}{
		{"a term's request just inside the deadline is sent", won, sent.Add(renewDeadlineSeconds*time.Second - time.Nanosecond), true},
		{"exactly at the deadline is refused", won, sent.Add(renewDeadlineSeconds * time.Second), false},
		{"thawed 20 s later, after a successor took over, is refused", won, sent.Add(20 * time.Second), false},
		{"a term never won sends nothing", &term{}, sent, false},
		{"a request outside any term is sent", nil, sent.Add(time.Hour), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.term != nil {
				ctx = withTerm(ctx, tc.term)
			}
			next := &countingTransport{}
			transport := &deadlineTransport{next: next, now: func() time.Time { return tc.at }}
			body := &closeRecorder{}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://apiserver/apis/x", body)
			_, err := transport.RoundTrip(req)
			if got := next.calls == 1; got != tc.wantSent {
				t.Fatalf("sent = %v, want %v (err %v)", got, tc.wantSent, err)
			}
			if !tc.wantSent && (!errors.Is(err, ErrTermOver) || !body.closed) {
				t.Errorf("refusal err = %v, body closed = %v; want ErrTermOver and a closed body", err, body.closed)
			}
		})
	}
}

// A stopped or stalled process whose write was fenced just before the
// freeze resumes after its deadline: the request must never leave.
func TestDeadlineTransport_WriteFencedBeforeAFreezeIsNotSentAfterIt(t *testing.T) {
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
			transport := &deadlineTransport{next: next, now: func() time.Time { return tc.at }}
			body := &closeRecorder{}
			req, _ := http.NewRequestWithContext(wctx, http.MethodPatch, "https://apiserver/apis/x", body)
			_, err := transport.RoundTrip(req)
			if sent := next.calls == 1; sent != tc.wantSent {
				t.Fatalf("sent = %v, want %v (err %v)", sent, tc.wantSent, err)
			}
			if !tc.wantSent && (!errors.Is(err, ErrPastDeadline) || !body.closed) {
				t.Errorf("refusal err = %v, body closed = %v; want ErrPastDeadline and a closed body", err, body.closed)
			}
		})
	}
}

func TestDeadlineTransport_RequestWithoutADeadlineIsSent(t *testing.T) {
	next := &countingTransport{}
	req, _ := http.NewRequest(http.MethodGet, "https://apiserver/api", nil)
	if _, err := DeadlineTransport(next).RoundTrip(req); err != nil || next.calls != 1 {
		t.Fatalf("calls %d, err %v; want the request sent", next.calls, err)
	}
}

// The platform's /desired is a request of the term's work too: a leader
// thawed after its successor took over must not poll the platform either.
// A live term's poll is the control.
func TestDeadlineTransport_APlatformPollOfAnEndedTermIsNotSent(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotModified)
	}))
	defer srv.Close()
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := platform.New(base, "c-1", fixedToken{}, platform.Options{Wrap: DeadlineTransport})
	if err != nil {
		t.Fatal(err)
	}
	live := &term{}
	live.renewed(time.Now())
	if _, err := c.GetDesired(withTerm(t.Context(), live), `"e1"`); err != nil || hits.Load() != 1 {
		t.Fatalf("a live term's poll: err %v, %d requests; want it sent", err, hits.Load())
	}
	over := &term{}
	over.renewed(time.Now().Add(-time.Minute))
	if _, err := c.GetDesired(withTerm(t.Context(), over), `"e1"`); !errors.Is(err, ErrTermOver) || hits.Load() != 1 {
		t.Errorf("an ended term's poll: err %v, %d requests; want ErrTermOver and none sent", err, hits.Load())
	}
}

type fixedToken struct{}

func (fixedToken) Token(context.Context) (token.Token, error) { return "kz-test", nil }
func (fixedToken) Invalidate()                                {}

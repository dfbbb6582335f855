package lead

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func TestLock_ARenewalStampsTheTermWithWhenItWasSent(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	now := start
	inner := &slowLock{advance: func() { now = now.Add(3 * time.Second) }} // each write takes 3 s
	tm := &term{}
	l := &recordingLock{Interface: inner, identity: "me", term: tm, now: func() time.Time { return now }}

	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	// Sent at start, answered at start+3 s: the term ends 10 s after the send.
	if !tm.live(start.Add(renewDeadlineSeconds*time.Second-time.Nanosecond)) || tm.live(start.Add(renewDeadlineSeconds*time.Second)) {
		t.Fatalf("term stamped %v, want the send time %v", *tm.renewSent.Load(), start)
	}
	// A write naming someone else (a release) is no renewal.
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatal(err)
	}
	if got := *tm.renewSent.Load(); !got.Equal(start) {
		t.Errorf("a release moved the term's stamp to %v", got)
	}
}

func TestLock_AfterTheTermEndsTheElectorSendsNothing(t *testing.T) {
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	now := start
	inner := &slowLock{}
	tm := &term{}
	l := &recordingLock{Interface: inner, identity: "me", term: tm, now: func() time.Time { return now }}

	// A standby campaigns: its reads go out though it never won.
	if _, _, err := l.Get(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	now = start.Add(9 * time.Second) // inside the term: a renewal goes out
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	calls := inner.calls
	now = now.Add(renewDeadlineSeconds * time.Second) // frozen past the renew deadline, then thawed
	if _, _, err := l.Get(context.Background()); !errors.Is(err, ErrTermOver) {
		t.Errorf("Get after the term: %v, want ErrTermOver", err)
	}
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); !errors.Is(err, ErrTermOver) {
		t.Errorf("renewal after the term: %v, want ErrTermOver", err)
	}
	if err := l.Update(context.Background(), resourcelock.LeaderElectionRecord{}); !errors.Is(err, ErrTermOver) {
		t.Errorf("release after the term: %v, want ErrTermOver", err)
	}
	if inner.calls != calls {
		t.Errorf("%d request(s) reached the Lease after the term ended, want 0", inner.calls-calls)
	}
}

// slowLock is a Lease lock that answers every call and counts it; advance,
// if set, runs inside each write, as the time the apiserver takes.
// TestLock_CreateIsRefusedAndNeverSent: the elector creates the Lease when
// its Get finds none; the actor refuses, naming the Lease deploy/actor
// ships, sends nothing, and has won nothing.
func TestLock_CreateIsRefusedAndNeverSent(t *testing.T) {
	inner := &slowLock{}
	tm := &term{}
	l := &recordingLock{Interface: inner, identity: "me", term: tm, now: time.Now}
	err := l.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if !errors.Is(err, errNoLease) || !strings.Contains(err.Error(), "kubehz-system/kubehz-actor") {
		t.Errorf("Create: %v, want the missing Lease named", err)
	}
	if inner.calls != 0 || tm.won() {
		t.Errorf("a refused Create sent %d call(s); won %v", inner.calls, tm.won())
	}
}

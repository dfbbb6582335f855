package lead

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestFence_WriteConfirmsTheLeaseAndBoundsTheDeadline is Write through a fake
// apiserver: what it reads, in which order, and what it hands back. The
// lease-shape boundaries are writeDeadline's own table below.
func TestFence_WriteConfirmsTheLeaseAndBoundsTheDeadline(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	// The contract's numbers (README, The actor): a 15 s lease, writes
	// end at most 5 s from the check and at least 5 s before the lease's
	// expiry.
	const duration = 15
	const writeWithin, margin = 5 * time.Second, 5 * time.Second
	expiry := func(renewed time.Time) time.Time { return renewed.Add(duration * time.Second) }

	cases := []struct {
		name      string
		killed    bool
		cancelled bool
		lease     *coordinationv1.Lease // nil: the Lease does not exist
		getErr    error                 // the apiserver's answer to the read, if any
		// wantErr is matched with errors.Is; wantRead instead asks for a
		// refusal that quotes the fence's own failed read but does not
		// unwrap to its API status, which callers would take for the
		// write's own answer (a Lease's NotFound for "Machine already gone").
		wantErr      error
		wantRead     string
		wantReads    int
		wantDeadline time.Time
		// The actor's own Deployment: absent, being deleted, or unreadable.
		noDeployment, deleting bool
		deploymentErr          error
		wantTripped            bool
	}{
		{
			name:   "killed refuses without reading the lease",
			killed: true, lease: heldLease("me", now.Add(-time.Second), duration),
			wantErr: ErrKilled, wantReads: 0,
		},
		{
			name:      "cancelled caller refuses without reading the lease",
			cancelled: true, lease: heldLease("me", now.Add(-time.Second), duration),
			wantErr: context.Canceled, wantReads: 0,
		},
		{
			name:     "missing lease refuses",
			wantRead: `leases.coordination.k8s.io "kubehz-actor" not found`, wantReads: 1,
		},
		{
			name:  "failed read refuses",
			lease: heldLease("me", now.Add(-time.Second), duration), getErr: errApiserverDown,
			wantRead: errApiserverDown.Error(), wantReads: 1,
		},
		{
			name:    "lease held by another identity refuses",
			lease:   heldLease("other", now.Add(-time.Second), duration),
			wantErr: ErrLostLease, wantReads: 1,
		},
		{
			name:      "fresh renewal: the deadline is 5 s from now",
			lease:     heldLease("me", now.Add(-time.Second), duration),
			wantReads: 2, wantDeadline: now.Add(writeWithin),
		},
		{
			name:      "margin reached within 5 s: the deadline is the expiry less the margin",
			lease:     heldLease("me", now.Add(-duration*time.Second+margin+2*time.Second), duration),
			wantReads: 2, wantDeadline: now.Add(2 * time.Second),
		},
		{
			name:  "the actor Deployment deleted fences",
			lease: heldLease("me", now.Add(-time.Second), duration), noDeployment: true,
			wantErr: ErrKilled, wantReads: 2, wantTripped: true,
		},
		{
			name:  "the actor Deployment being deleted fences",
			lease: heldLease("me", now.Add(-time.Second), duration), deleting: true,
			wantErr: ErrKilled, wantReads: 2, wantTripped: true,
		},
		{
			name:  "a failed Deployment read refuses without fencing",
			lease: heldLease("me", now.Add(-time.Second), duration), deploymentErr: errApiserverDown,
			wantRead: errApiserverDown.Error(), wantReads: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.lease != nil {
				objects = append(objects, tc.lease)
			}
			if !tc.noDeployment {
				objects = append(objects, actorDeployment(tc.deleting))
			}
			client := fake.NewClientset(objects...)
			if tc.getErr != nil {
				client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.getErr
				})
			}
			if tc.deploymentErr != nil {
				client.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, tc.deploymentErr
				})
			}
			f := newFence(client, testNamespace, testLease, testDeployment, "me")
			f.now = func() time.Time { return now }
			f.killed.Store(tc.killed)
			parent, cancelParent := context.WithCancel(context.Background())
			defer cancelParent()
			if tc.cancelled {
				cancelParent()
			}

			wctx, cancel, err := f.Write(parent)
			if tripped := closed(f.Tripped()); tripped != tc.wantTripped {
				t.Errorf("Tripped closed = %v, want %v", tripped, tc.wantTripped)
			}

			if reads := len(client.Actions()); reads != tc.wantReads {
				t.Errorf("requests to the apiserver = %d, want %d", reads, tc.wantReads)
			}
			refused := tc.wantErr != nil || tc.wantRead != ""
			if refused {
				switch {
				case err == nil:
					t.Fatalf("Write succeeded, want a refusal")
				case tc.wantRead != "" && (!strings.Contains(err.Error(), tc.wantRead) || errors.As(err, new(apierrors.APIStatus)) || errors.Is(err, errApiserverDown)):
					t.Errorf("Write error = %v, want one quoting %q that unwraps to neither its status nor its error", err, tc.wantRead)
				case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
					t.Errorf("Write error = %v, want %v", err, tc.wantErr)
				}
				if wctx != nil || cancel != nil {
					t.Errorf("a refused Write returned a context or cancel func")
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			defer cancel()
			deadline, ok := wctx.Deadline()
			if !ok {
				t.Fatalf("the write context has no deadline")
			}
			if !deadline.Equal(tc.wantDeadline) {
				t.Errorf("deadline = %s, want %s", deadline, tc.wantDeadline)
			}
			if deadline.After(now.Add(writeWithin)) {
				t.Errorf("deadline %s is later than 5 s from now", deadline)
			}
			if deadline.After(expiry(tc.lease.Spec.RenewTime.Time).Add(-margin)) {
				t.Errorf("deadline %s is later than 5 s before the lease expiry", deadline)
			}
			cancelParent()
			if wctx.Err() == nil {
				t.Errorf("the write context outlived the caller's context")
			}
		})
	}
}

func TestWriteDeadline_RefusesOrBoundsAtEveryEdge(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	spec := func(holder *string, renewed *time.Time, seconds *int32) coordinationv1.LeaseSpec {
		s := coordinationv1.LeaseSpec{HolderIdentity: holder, LeaseDurationSeconds: seconds}
		if renewed != nil {
			r := metav1.NewMicroTime(*renewed)
			s.RenewTime = &r
		}
		return s
	}
	me, other, empty := "me", "other", ""
	fifteen := int32(15)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	cases := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want time.Time // zero: refused with ErrLostLease
	}{
		{"held by another identity", spec(&other, at(-time.Second), &fifteen), time.Time{}},
		{"released: empty holder", spec(&empty, at(-time.Second), &fifteen), time.Time{}},
		{"no holder", spec(nil, at(-time.Second), &fifteen), time.Time{}},
		{"no renewal time", spec(&me, nil, &fifteen), time.Time{}},
		{"no duration", spec(&me, at(-time.Second), nil), time.Time{}},
		{"expired exactly now", spec(&me, at(-15*time.Second), &fifteen), time.Time{}},
		{"expired a microsecond ago", spec(&me, at(-15*time.Second-time.Microsecond), &fifteen), time.Time{}},
		{"not expired, but inside the 5 s margin", spec(&me, at(-14*time.Second), &fifteen), time.Time{}},
		{"exactly at expiry less 5 s", spec(&me, at(-10*time.Second), &fifteen), time.Time{}},
		{"a microsecond before expiry less 5 s", spec(&me, at(-10*time.Second+time.Microsecond), &fifteen), now.Add(time.Microsecond)},
		{"margin reached within 5 s: expiry less 5 s", spec(&me, at(-8*time.Second), &fifteen), now.Add(2 * time.Second)},
		{"margin reached exactly 5 s from now: 5 s from now", spec(&me, at(-5*time.Second), &fifteen), now.Add(5 * time.Second)},
		{"renewed just now: 5 s from now", spec(&me, at(0), &fifteen), now.Add(5 * time.Second)},
		{"renewed in this clock's future (skew): 5 s from now", spec(&me, at(3*time.Second), &fifteen), now.Add(5 * time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := writeDeadline(tc.spec, "me", now)
			if tc.want.IsZero() {
				if !errors.Is(err, ErrLostLease) || !got.IsZero() {
					t.Fatalf("got %s, %v; want a refusal with ErrLostLease", got, err)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// The Lease's renewTime is wall-clock time; a clock stepped back after a
// renewal makes the Lease look fresher than it is and leave a write more
// time than it has. The term's monotonic stamp of when the renewal was sent
// caps the write: it ends 10 s (a 15 s lease less the 5 s margin) after
// that stamp, and none starts past it.
func TestTermBound_CapsTheWriteByTheTermsOwnRenewal(t *testing.T) {
	now := time.Now()
	const fromLease = 3 * time.Second // what the Lease leaves, read on a clock stepped back 2 s
	at := func(ago time.Duration) context.Context {
		tm := newTerm(context.Background())
		tm.renewed(now.Add(-ago))
		return tm.ctx
	}
	cases := []struct {
		name    string
		ctx     context.Context
		want    time.Duration
		refused bool
	}{
		{name: "no term: the Lease's window stands", ctx: context.Background(), want: fromLease},
		{name: "renewed 1 s ago: the Lease's window is the shorter", ctx: at(time.Second), want: fromLease},
		{name: "renewed 9 s ago: 1 s left by the term's clock", ctx: at(9 * time.Second), want: time.Second},
		{name: "renewed 10 s ago: refused", ctx: at(10 * time.Second), refused: true},
		{name: "a term never won: refused", ctx: newTerm(context.Background()).ctx, refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := termBound(tc.ctx, fromLease, now)
			if tc.refused {
				if !errors.Is(err, ErrLostLease) {
					t.Fatalf("termBound = %s, %v; want ErrLostLease", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("termBound = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// Write applies the term's cap: with a Lease that looks renewed a second ago
// (a wall clock stepped back) but a term whose renewal went out 9 s ago,
// the write gets 1 s, not the 5 s the Lease alone would give; at 10 s it is
// refused before the Deployment is read.
func TestFence_WriteUnderATermIsCappedByItsRenewalStamp(t *testing.T) {
	now := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago       time.Duration
		want      time.Time
		wantReads int
	}{
		{ago: 9 * time.Second, want: now.Add(time.Second), wantReads: 2},
		{ago: 10 * time.Second, wantReads: 1},
	} {
		t.Run(tc.ago.String(), func(t *testing.T) {
			client := fake.NewClientset(heldLease("me", now.Add(-time.Second), 15), actorDeployment(false))
			f := newFence(client, testNamespace, testLease, testDeployment, "me")
			f.now = func() time.Time { return now }
			tm := newTerm(context.Background())
			tm.renewed(now.Add(-tc.ago))
			wctx, cancel, err := f.Write(tm.ctx)
			if reads := len(client.Actions()); reads != tc.wantReads {
				t.Errorf("requests to the apiserver = %d, want %d", reads, tc.wantReads)
			}
			if tc.want.IsZero() {
				if !errors.Is(err, ErrLostLease) {
					t.Fatalf("Write = %v, want ErrLostLease", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			defer cancel()
			if deadline, _ := wctx.Deadline(); !deadline.Equal(tc.want) {
				t.Errorf("deadline = %s, want %s", deadline, tc.want)
			}
		})
	}
}

// A term's start survives reads that fail: Confirm reads again every 2 s
// until one shows the term standing, rather than end the term (and the
// process); a lost lease ends it at once (the control).
func TestFence_ConfirmRetriesAFailedReadAndStopsOnALostLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		client := fake.NewClientset(heldLease("me", start.Add(-time.Second), 15), actorDeployment(false))
		failures := 3
		client.PrependReactor("get", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
			if failures > 0 {
				failures--
				return true, nil, errApiserverDown
			}
			return false, nil, nil
		})
		f := newFence(client, testNamespace, testLease, testDeployment, "me")
		var retried []time.Duration
		err := f.Confirm(t.Context(), func(error) { retried = append(retried, time.Since(start)) })
		if err != nil {
			t.Fatalf("Confirm = %v after the reads recovered", err)
		}
		if want := []time.Duration{0, 2 * time.Second, 4 * time.Second}; !slices.Equal(retried, want) {
			t.Errorf("failed reads at %v, want %v", retried, want)
		}

		other := fake.NewClientset(heldLease("other", start, 15), actorDeployment(false))
		lost := newFence(other, testNamespace, testLease, testDeployment, "me")
		if err := lost.Confirm(t.Context(), func(err error) { t.Errorf("retried %v", err) }); !errors.Is(err, ErrLostLease) {
			t.Errorf("Confirm on another's lease = %v, want ErrLostLease", err)
		}
	})
}

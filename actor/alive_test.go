package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/lead"
	"kubehz.dev/agent/shared/liveness"
	"kubehz.dev/agent/shared/testkit"
)

// A leader whose work loop wedges (here: a desired-state fetch that never
// returns) keeps renewing its lease on the elector's goroutine, so the
// standby would never take over. The probe must fail exactly then, and
// pass while the same loop turns.
func TestLiveness_WedgedWorkFailsTheProbeWhileTheLeaseIsStillRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "alive")
		log := slog.New(slog.DiscardHandler)
		alive := progress{liveness.NewBeacon(path, liveness.Options{Log: log})}
		alive.Idle()
		client := fake.NewClientset(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "actor"}},
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "kubehz-actor"}}) // as deploy/actor ships it
		fetcher := &wedgingFetcher{answers: 4}
		work := func(ctx context.Context, _ *lead.Fence) error {
			alive.Step()
			defer alive.Idle()
			return desired.NewPoller(fetcher, nopExecutor{}, clock.RealClock{}, desired.PollOptions{Interval: 10 * time.Second,
				Jitter: func() float64 { return 0 }, Log: log, Progress: alive}).Run(ctx)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- lead.Run(ctx, lead.Config{Client: client, Namespace: "kubehz-system", LeaseName: "kubehz-actor",
				Deployment: "actor", Identity: "a", Log: log}, nil, work)
		}()

		// The control: four polls 10 s apart, answered; the probe passes.
		time.Sleep(35 * time.Second)
		synctest.Wait()
		if err := liveness.Check(path, time.Now()); err != nil {
			t.Fatalf("probe failed while the loop turns: %v", err)
		}
		// The fifth fetch hangs. Two minutes on, the lease is still renewed
		// by this process, and the probe fails.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		lease, err := client.CoordinationV1().Leases("kubehz-system").Get(context.Background(), "kubehz-actor", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := lease.Spec.HolderIdentity; h == nil || *h != "a" || time.Since(lease.Spec.RenewTime.Time) > 2*time.Second {
			t.Fatalf("lease %+v: want it held by a and renewed within the 2 s retry period", lease.Spec)
		}
		if err := liveness.Check(path, time.Now()); err == nil {
			t.Fatal("probe passed while the work loop has been stuck for two minutes")
		}
		if n := fetcher.count(); n != 5 {
			t.Errorf("fetches = %d, want 5 (four answered, the fifth stuck)", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("lead.Run after the stop: %v", err)
		}
	})
}

// A new leader that cannot confirm its term (the Deployment read fails)
// reads again every 2 s for as long as the term lasts. Each read is the loop
// turning, so the probe must keep passing: a restart would only put the
// replicas through the same failing read again.
func TestLiveness_ATermStillConfirmingPassesTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "alive")
		logs := &testkit.Logs{}
		alive := progress{liveness.NewBeacon(path, liveness.Options{Log: logs.Logger()})}
		alive.Idle()
		client := fake.NewClientset(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "actor"}},
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "kubehz-actor"}})
		client.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewInternalError(errors.New("etcdserver: request timed out"))
		})
		a := &actor{log: logs.Logger(), alive: alive}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- lead.Run(ctx, lead.Config{Client: client, Namespace: "kubehz-system", LeaseName: "kubehz-actor",
				Deployment: "actor", Identity: "a", Log: logs.Logger()}, nil, a.term)
		}()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		if n := strings.Count(logs.String(), "Cannot confirm the new term yet"); n < 60 {
			t.Fatalf("%d failed confirmations logged in 3 minutes, want one every 2 s; logs:\n%s", n, logs.String())
		}
		if err := liveness.Check(path, time.Now()); err != nil {
			t.Errorf("probe failed while the term reads again every 2 s: %v", err)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("lead.Run after the stop: %v", err)
		}
	})
}

func TestLiveness_StandbyPassesTheProbeIndefinitely(t *testing.T) {
	path := filepath.Join(t.TempDir(), "alive")
	alive := progress{liveness.NewBeacon(path, liveness.Options{})}
	alive.Step()
	alive.Idle() // the term ended, or never began
	if err := liveness.Check(path, time.Now().Add(24*time.Hour)); err != nil {
		t.Fatalf("an idle standby failed the probe: %v", err)
	}
}

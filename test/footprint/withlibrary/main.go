// Command withlibrary holds a Lease with client-go's tools/leaderelection,
// set up as the actor sets it up, and does nothing else. It is a measuring
// fixture for test/footprint, never shipped: beside withtypes, which holds a
// Lease with kubeapi's own types, it shows what linking that package costs a
// binary's resident memory.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"kubehz.dev/agent/shared/kubeconfig"
	"kubehz.dev/agent/shared/memlimit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Getenv)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "withlibrary:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string) error {
	memlimit.Apply(getenv, slog.Default()) // the agents' GC settings
	cfg, err := kubeconfig.Load(getenv)
	if err != nil {
		return err
	}
	client, err := coordinationv1.NewForConfig(cfg)
	if err != nil {
		return err
	}
	name := getenv("FOOTPRINT_LEASE")
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: getenv("FOOTPRINT_NAMESPACE"), Name: name},
			Client:     client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: name},
		},
		// The actor's timings (actor/internal/lead).
		LeaseDuration:   15 * time.Second,
		RenewDeadline:   10 * time.Second,
		RetryPeriod:     2 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { <-ctx.Done() },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		return err
	}
	elector.Run(ctx)
	return nil
}

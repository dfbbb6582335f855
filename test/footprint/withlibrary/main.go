// Command withlibrary holds a Lease with client-go's tools/leaderelection,
// set up as the actor sets it up, and does nothing else. It is a measuring
// fixture for test/footprint, never shipped: beside withtypes, which holds a
// Lease with kubeapi's own types, it shows what linking that package costs a
// binary's resident memory.
package main

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"kubehz.dev/agent/test/footprint/fixture"
)

func main() { fixture.Main("withlibrary", hold) }

func hold(ctx context.Context, cfg *rest.Config, lease fixture.Lease) error {
	client, err := coordinationv1.NewForConfig(cfg)
	if err != nil {
		return err
	}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: lease.Namespace, Name: lease.Name},
			Client:     client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: lease.Name},
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

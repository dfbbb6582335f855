package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/lead"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/platform"
)

// actor is every part of the running actor. Between terms only the kill
// switch runs; each leadership term builds its caches and Executor afresh
// and stops them when it ends, so a standby holds no cluster state.
type actor struct {
	cfg      settings
	log      *slog.Logger
	identity string
	client   kubernetes.Interface // built-in kinds, over protobuf
	dyn      dynamic.Interface    // machine-controller's kinds
	plat     *platform.Client
	state    *stateFile
	alive    progress

	killSwitch *lead.KillSwitch
}

func newActor(cfg settings, log *slog.Logger, identity string, c connect.Clients, state *stateFile, alive progress) (*actor, error) {
	client, err := typedClient(c.Rest)
	if err != nil {
		return nil, err
	}
	return &actor{cfg: cfg, log: log, identity: identity, client: client, dyn: c.Dynamic, plat: c.Platform,
		state: state, alive: alive, killSwitch: lead.NewKillSwitch(client, cfg.Namespace, cfg.Deployment, lead.KillSwitchOptions{Log: log})}, nil
}

// typedClient is the typed clientset: tools/leaderelection needs it, so the
// actor links it anyway (the observer does not). Built-in kinds speak
// protobuf, which decodes 5,000 Nodes with a fraction of JSON's CPU and
// garbage.
func typedClient(restCfg *rest.Config) (kubernetes.Interface, error) {
	typed := rest.CopyConfig(restCfg)
	typed.ContentType = runtime.ContentTypeProtobuf
	typed.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return client, nil
}

// run watches the kill switch and, once its first list is in and while the
// actor's Deployment stands, campaigns for the Lease; each term won runs
// term. Once the kill switch trips, the actor stays down until the pod is deleted.
func (a *actor) run(ctx context.Context) error {
	switchCtx, stopSwitch := context.WithCancel(ctx)
	switchDone := make(chan struct{})
	synced := make(chan struct{})
	go func() { defer close(switchDone); a.killSwitch.Run(switchCtx, synced) }()
	defer func() { stopSwitch(); <-switchDone }()
	select {
	case <-ctx.Done():
		return nil
	case <-synced:
	}
	a.alive.Idle()

	select {
	case <-a.killSwitch.Tripped():
		a.log.Warn("The actor Deployment is gone or going; never campaigning",
			"check", "kubectl -n "+a.cfg.Namespace+" get deployment "+a.cfg.Deployment+"; re-apply deploy/actor to act again")
		<-ctx.Done()
		return nil
	default:
	}
	err := lead.Run(ctx, lead.Config{Client: a.client, Namespace: a.cfg.Namespace, LeaseName: a.cfg.ActorLease,
		Deployment: a.cfg.Deployment, Identity: a.identity, Log: a.log, Holder: a.state.holder},
		a.killSwitch.Tripped(), a.term)
	if errors.Is(err, lead.ErrKilled) {
		// The Deployment is going away: stay down, quietly, until the pod is
		// killed, rather than exit and be restarted into the same state.
		a.log.Warn("Kill switch tripped: no longer acting; idle until the pod is deleted")
		<-ctx.Done()
		return nil
	}
	a.log.Info("Actor stopped", "err", err)
	return err
}

// term is one leadership term's work: it polls the platform and acts on
// each desired-state document until the term ends.
func (a *actor) term(ctx context.Context, fence *lead.Fence) error {
	a.alive.Step()
	defer a.alive.Idle()
	// The kill switch's watch may lag (a reconnect): confirm with the
	// fence's live reads that this term and the Deployment stand before
	// polling. Each failed read is the loop turning, not a wedge: a restart
	// would only bring the replicas back to the same read.
	if err := fence.Confirm(ctx, func(err error) {
		a.log.Warn("Cannot confirm the new term yet; reading again in 2 s", "err", err)
		a.alive.Waiting(lead.ConfirmRetry)
	}); err != nil {
		return err
	}
	exec := a.newExecutor(ctx, fence)
	a.state.leading(func() cacheSizes {
		return cacheSizes{MachineDeployments: len(exec.MDs.List()),
			Machines: len(exec.Machines.List()), Nodes: len(exec.Nodes.List())}
	})
	defer a.state.leading(nil) // deferred first, so it runs after the caches stop
	defer exec.MDs.Stop()
	defer exec.Machines.Stop()
	defer exec.Nodes.Stop()
	// Before anything else, this term's own (empty) report replaces
	// whatever a previous leader left; if it fails, the poller's ticks write
	// it again, and the executor acts on nothing until one lands.
	exec.Flush(ctx)
	poller := desired.NewPoller(a.plat, exec, clock.RealClock{}, desired.PollOptions{Interval: a.cfg.DesiredPoll,
		Log: a.log, Progress: a.alive, Results: a.state.polled})
	return poller.Run(ctx)
}

// newExecutor builds a term's Executor: fresh caches, empty reports, and
// every write it makes sent through fence.
func (a *actor) newExecutor(ctx context.Context, fence *lead.Fence) *execute.Executor {
	cfg, client, dyn := a.cfg, a.client, a.dyn
	caches := cluster.Options{Served: kubeapi.ServedBy(client.Discovery().RESTClient()), Log: a.log}
	publisher := recordedPublisher{state: a.state,
		Publisher: &store.Publisher{Client: client, Namespace: cfg.Namespace, ConfigMap: cfg.ActionsConfigMap, Identity: a.identity, Fence: fence, Now: time.Now}}
	return &execute.Executor{
		Base:        ctx,
		Fence:       fence,
		Store:       store.New(),
		MDs:         cluster.NewMachineDeployments(dyn, cfg.MDNamespace, caches),
		Patcher:     &mdPatcher{dyn: dyn},
		Events:      &eventRecorder{client: client, fence: fence, identity: a.identity, log: a.log},
		Publisher:   publisher,
		Namespace:   cfg.MDNamespace,
		MaxReplicas: int64(cfg.MaxReplicas),
		Log:         a.log,
		Progress:    a.alive,

		Machines:        cluster.NewMachines(dyn, cfg.MDNamespace, caches),
		Nodes:           cluster.NewNodes(client, caches),
		Deleter:         &machineDeleter{dyn: dyn, client: client},
		Pods:            &nodePods{client: client},
		ControlPlane:    &controlPlaneSources{client: client},
		HealMemory:      heal.NewMemory(time.Now()), // the cooldown starts with the term
		EvictionTimeout: cfg.HealEvictionTimeout,
		HealLimits:      cfg.HealLimits,
	}
}

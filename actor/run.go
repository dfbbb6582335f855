package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/handoff"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/lead"
	"kubehz.dev/agent/actor/internal/poll"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/liveness"
	"kubehz.dev/agent/shared/logs"
	"kubehz.dev/agent/shared/memlimit"
	"kubehz.dev/agent/shared/status"
)

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 1 {
		if answered, err := buildinfo.Answer(args[1], "actor", usage, stdout); answered {
			return err
		}
		switch args[1] {
		case "probe":
			// The exec liveness probe: a separate, short-lived process that
			// only reads the file the running actor keeps.
			return liveness.Check(livenessPath(getenv), time.Now())
		case "status":
			return statusCommand(args[2:], getenv, stdout)
		default:
			// A mistyped `kubectl exec … actor stauts` must not start a
			// third replica campaigning beside the Deployment's two.
			return config.UnknownCommand(args[1], "probe", "status", "version", "help")
		}
	}
	started := time.Now()
	cfg, err := config.LoadActor(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	log := logs.New(stderr, cfg.LogLevel)
	alive := progress{liveness.NewBeacon(livenessPath(getenv), nil, log)}
	alive.beacon.Mark(startupGrace)
	identity := identity(getenv)
	log.Info("Starting actor", "version", buildinfo.Version, "identity", identity, "config", cfg)
	memlimit.Apply(getenv, log)
	state := newStateFile(status.PathNextTo(livenessPath(getenv)), identity, buildinfo.Version, started, log)

	// The identity in the User-Agent tells the two replicas apart in the
	// apiserver's audit log, where both act as the same ServiceAccount.
	c, err := connect.Open(ctx, cfg.Common, getenv, "actor/"+identity, lead.SendGuard, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped while the token Secret was being read
		}
		return err
	}
	// The typed clientset: tools/leaderelection needs it, so the actor links
	// it anyway (the observer does not). Built-in kinds speak protobuf, which
	// decodes 5,000 Nodes with a fraction of JSON's CPU and garbage.
	typed := rest.CopyConfig(c.Rest)
	typed.ContentType = runtime.ContentTypeProtobuf
	typed.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	client, err := kubernetes.NewForConfig(typed)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, plat := c.Dynamic, c.Platform

	guard := lead.NewGuard(client, cfg.Namespace, cfg.Deployment, log)
	guardCtx, stopGuard := context.WithCancel(ctx)
	guardDone := make(chan struct{})
	synced := make(chan struct{})
	go func() { defer close(guardDone); guard.Run(guardCtx, synced) }()
	defer func() { stopGuard(); <-guardDone }()
	select {
	case <-ctx.Done():
		return nil
	case <-synced:
	}
	alive.Idle()

	work := func(ctx context.Context, fence *lead.Fence) error {
		alive.Step()
		defer alive.Idle()
		// The guard's watch may lag (a reconnect): confirm with the fence's
		// live reads that this term and the Deployment stand before polling.
		_, confirmed, err := fence.Write(ctx)
		if err != nil {
			return err
		}
		confirmed()
		served := kubeapi.ServedBy(client.Discovery().RESTClient())
		publisher := recordedPublisher{state: state,
			Publisher: &handoff.Publisher{Client: client, Namespace: cfg.Namespace, ConfigMap: cfg.ActionsConfigMap, Identity: identity, Fence: fence, Now: time.Now}}
		exec := &execute.Executor{
			Base:        ctx,
			Fence:       fence,
			Store:       store.New(nil),
			MDs:         cluster.NewMachineDeployments(dyn, served, cfg.MDNamespace, log),
			Patcher:     &mdPatcher{dyn: dyn},
			Events:      &eventRecorder{client: client, fence: fence, identity: identity, log: log},
			Publisher:   publisher,
			Namespace:   cfg.MDNamespace,
			MaxReplicas: int64(cfg.MaxReplicas),
			Log:         log,
			Progress:    alive,

			Machines:        cluster.NewMachines(dyn, served, cfg.MDNamespace, log),
			Nodes:           cluster.NewNodes(client, log),
			Deleter:         &machineDeleter{dyn: dyn, client: client},
			Pods:            &nodePods{client: client},
			Version:         &controlPlaneSources{client: client},
			Memory:          heal.NewMemory(time.Now()), // the cooldown starts with the term
			EvictionTimeout: cfg.HealEvictionTimeout,
			HealLimits: heal.Limits{MaxInFlight: cfg.HealLimits.MaxInFlight, MinCooldown: cfg.HealLimits.MinCooldown,
				MinStartupTimeout: cfg.HealLimits.MinStartupTimeout, MinUnhealthyAfter: cfg.HealLimits.MinUnhealthyAfter},
		}
		state.leading(func() status.ActorCaches {
			return status.ActorCaches{MachineDeployments: len(exec.MDs.List()),
				Machines: len(exec.Machines.List()), Nodes: len(exec.Nodes.List())}
		})
		defer state.leading(nil) // deferred first, so it runs after the caches stop
		defer exec.MDs.Stop()
		defer exec.Machines.Stop()
		defer exec.Nodes.Stop()
		// Before anything else, this term's own (empty) report replaces
		// whatever a previous leader left; if it fails, the poller's
		// first tick writes it again.
		exec.Flush(ctx)
		poller := poll.New(plat, exec, clock.RealClock{}, cfg.DesiredPoll,
			backoff.New(backoff.DefaultBase, backoff.DefaultMax, nil), nil, log).WithProgress(alive).WithResults(state.polled)
		return poller.Run(ctx)
	}
	select {
	case <-guard.Fenced():
		log.Warn("The actor Deployment is gone or going; never campaigning",
			"check", "kubectl -n "+cfg.Namespace+" get deployment "+cfg.Deployment+"; re-apply deploy/actor to act again")
		<-ctx.Done()
		return nil
	default:
	}
	err = lead.Run(ctx, lead.Config{Client: client, Namespace: cfg.Namespace, LeaseName: cfg.ActorLease,
		Deployment: cfg.Deployment, Identity: identity, Log: log, Holder: state.holder},
		guard.Fenced(), work)
	if errors.Is(err, lead.ErrFenced) {
		// The Deployment is going away: stay down, quietly, until the pod is
		// killed, rather than exit and be restarted into the same state.
		log.Warn("Fenced: no longer acting; idle until the pod is deleted")
		<-ctx.Done()
		return nil
	}
	log.Info("Actor stopped", "err", err)
	return err
}

// identity names this process in the Lease: the pod name, plus a random
// suffix so a restarted container never inherits its predecessor's term.
func identity(getenv func(string) string) string {
	name := getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return name + "_" + hex.EncodeToString(b)
}

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"kubehz.dev/agent/observer/internal/actions"
	"kubehz.dev/agent/observer/internal/beat"
	"kubehz.dev/agent/observer/internal/cluster"
	"kubehz.dev/agent/observer/internal/health"
	"kubehz.dev/agent/observer/internal/inventory"
	"kubehz.dev/agent/observer/internal/machines"
	"kubehz.dev/agent/observer/internal/owner"
	"kubehz.dev/agent/observer/internal/state"
	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/liveness"
	"kubehz.dev/agent/shared/memlimit"
)

// observer is every part of the running observer. Each source of beat
// content signals the one change channel of the informer cache; the loop
// reads them all when a beat is due.
type observer struct {
	cfg settings
	log *slog.Logger

	caches    *cluster.Cache
	version   *cluster.Version
	marker    *owner.Watcher
	inventory *inventory.Manager
	machines  *machines.Source
	actions   *actions.Watcher
	health    *health.Monitor
	sender    *beat.Sender
	loop      *beat.Loop
	alive     *aliveFile
}

// firstReadsLimit bounds the first beat's wait for the actor's reports, the
// machine issues and pools, and the inventory: an apiserver slow to answer
// one of them delays the first beat, it does not stop it.
const firstReadsLimit = 10 * time.Second

func newObserver(cfg settings, log *slog.Logger, c connect.Clients, livenessFile string, statusFile *stateFile) *observer {
	api, dyn, restCfg := c.API, c.Dynamic, c.Rest
	clk := clock.RealClock{}
	o := &observer{cfg: cfg, log: log}
	o.alive = &aliveFile{beacon: liveness.NewBeacon(livenessFile, liveness.Options{Log: log}), interval: cfg.FullInterval}
	o.caches = cluster.New(cluster.Source{Nodes: api.Nodes(), Pods: api.PodPhases(""), Events: api.Events("")},
		cluster.Options{Events: cluster.EventOptions{KeepMessage: cfg.ReportNamespaces, MDNamespace: cfg.MDNamespace}, Now: clk.Now})
	signal := o.caches.Signal
	o.version = cluster.NewVersion(api.Raw(), cluster.VersionOptions{Log: log, Notify: signal})
	o.marker = owner.New(api.ConfigMaps(cfg.Namespace), owner.Options{Log: log, Notify: signal})
	o.inventory = inventory.New(dyn, clk, inventory.Options{Interval: cfg.FullInterval, Log: log, Notify: signal})
	o.machines = machines.New(dyn, kubeapi.ServedBy(api.Raw()), cfg.MDNamespace, clk,
		machines.Options{Events: o.caches.Events, Interval: cfg.FullInterval, Log: log, Notify: signal})
	o.health = health.New(health.Source{Pods: api.Pods(metav1.NamespaceSystem), CSRs: api.CertificateSigningRequests(), Raw: api.Raw()}, restCfg, clk,
		health.Options{Interval: cfg.FullInterval, Log: log, Notify: signal})
	o.actions = actions.New(actions.Source{ConfigMaps: api.ConfigMaps(cfg.Namespace), Leases: api.Leases(cfg.Namespace)},
		cfg.Namespace, actions.Names{ConfigMap: cfg.ActionsConfigMap, Lease: cfg.ActorLease}, clk,
		actions.Options{Log: log, Notify: signal})
	// The verdict write-back runs on the sender's verdict goroutine, never on
	// its send path (docs/contract.md#g-16); it gets its own deadline inside
	// Apply, and a shutdown cuts it short.
	o.sender = beat.NewSender(c.Platform, clk, beat.SenderOptions{Log: log,
		OnVerdict: o.inventory.Apply,
		OnOutcome: statusFile.delivered})
	statusFile.attach(o.marker.Beating, o.sizes, o.actorLease)
	o.loop = &beat.Loop{
		Cadence: beat.Cadence{Full: cfg.FullInterval, Debounce: cfg.Debounce, MinGap: cfg.MinGap},
		Clock:   clk,
		Changed: o.caches.Changed(),
		Build:   o.build,
		Enqueue: o.sender.Enqueue,
		Discard: o.sender.Discard,
		Beating: o.marker.Beating,
		Turned: func(now time.Time) {
			o.alive.turned(now)
			statusFile.turned(now)
		},
		Log:             log,
		FirstReads:      []interface{ HasSynced() bool }{o.actions, o.machines, o.inventory},
		FirstReadsLimit: firstReadsLimit,
	}
	return o
}

// build renders every source's current view as the wire wants it.
func (o *observer) build(now time.Time) ([]byte, error) {
	return json.Marshal(beat.Build(beat.Input{
		ClusterID:         o.cfg.ClusterID,
		AgentVersion:      buildinfo.Version,
		KubernetesVersion: o.version.Get(),
		Now:               now,
		ReportNamespaces:  o.cfg.ReportNamespaces,
		Nodes:             o.caches.Nodes(),
		Pods:              o.caches.Pods(o.cfg.ReportNamespaces),
		Events:            o.caches.Events(),
		Actions:           o.actions.Actions(now),
		Inventory:         o.inventory.Snapshot(),
		MachineIssues:     o.machines.Issues(),
		Pools:             o.machines.Pools(),
		Components:        o.health.Components(),
		Certificates:      o.health.Certificates(),
	}))
}

func (o *observer) sizes() state.Caches {
	nodes, pods, events := o.caches.Sizes()
	machines, pools := o.machines.Sizes()
	return state.Caches{Nodes: nodes, Pods: pods, WarningEvents: events, Machines: machines, Pools: pools}
}

func (o *observer) actorLease(now time.Time) state.ActorLease {
	holder, live := o.actions.Holder(now)
	return state.ActorLease{Holder: holder, Live: live, Riding: len(o.actions.Actions(now))}
}

// run starts every part and waits for all of them; the first beat goes out
// once the informer caches have synced.
func (o *observer) run(ctx context.Context) error {
	o.alive.start(time.Now())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { o.caches.Run(gctx); return nil })
	g.Go(func() error { return o.sender.Run(gctx) })
	g.Go(func() error { return o.marker.Run(gctx) })
	g.Go(func() error { return o.inventory.Run(gctx) })
	g.Go(func() error { return o.machines.Run(gctx) })
	g.Go(func() error { return o.health.Run(gctx) })
	g.Go(func() error { return o.actions.Run(gctx) })
	g.Go(func() error {
		if !o.caches.WaitForSync(gctx) {
			return nil // cancelled before the first list finished
		}
		memlimit.ReleaseAfterList()
		// The first beat carries the version when the apiserver answers;
		// Run keeps retrying if it did not.
		o.version.Refresh(gctx)
		g.Go(func() error { o.version.Run(gctx); return nil })
		o.log.Info("Caches synced; beating once the first reads end", "nodes", len(o.caches.Nodes()), "pods", o.caches.Pods(false).Total)
		return o.loop.Run(gctx)
	})
	return g.Wait()
}

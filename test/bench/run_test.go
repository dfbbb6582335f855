package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/wire"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// Bounds on the waits of one run; a hung binary fails the run, it does not
// hang the benchmark.
const (
	beatWait  = 15 * time.Minute // the largest cluster's initial sync included
	leadWait  = 2 * time.Minute  // a lease left by the previous run lapses in 15 s
	readyWait = 5 * time.Minute  // the leader's first pass: its caches' first sync
	stopWait  = 30 * time.Second
)

// agent is one running binary and what was measured of it.
type agent struct {
	name  string // observer, or the actor replica's pod name
	proc  *kube.Process
	start time.Time
	rss   []int64 // VmRSS, one sample a second over the window
	ticks int64   // utime+stime at the window's start
	stats stats
	// stopped: exited after SIGTERM, with this code or error.
	stopped bool
	code    int
	err     error
}

// stats is one process' figures over the steady window.
type stats struct {
	RSSMedianMiB float64 `json:"rssMedianMiB"`
	RSSMaxMiB    float64 `json:"rssMaxSampleMiB"`
	PeakMiB      float64 `json:"peakMiB"` // VmHWM: since start, initial sync included
	Millicores   float64 `json:"cpuMillicores"`
	Samples      int     `json:"samples"`
}

// run is the three binaries against one variant of the cluster.
type run struct {
	v        variant
	sim      *platformsim.Server
	dir      string
	offset   int64 // the audit log's size before the binaries started
	observer *agent
	actors   [2]*agent
	leader   *agent // the Lease holder; the other replica stands by
	res      *result
}

// result is what one variant measured, as printed and written to JSON.
type result struct {
	Variant   variant   `json:"variant"`
	Populated populated `json:"populated"`
	// FirstFullBeatSec is from the observer's start to its first beat that
	// counted every pod and node; FirstBeatFull says the very first did.
	FirstFullBeatSec float64 `json:"firstFullBeatSec"`
	FirstBeatFull    bool    `json:"firstBeatFull"`
	BeatBytes        int     `json:"beatBytes"`
	// FirstBeatCPUSec is the CPU the observer had used when the first full beat
	// arrived: on two shared cores the wall time above also carries the
	// apiserver's share, and this tells the observer's own.
	FirstBeatCPUSec float64 `json:"firstBeatCpuSec"`
	// LeaderReadySec is from the leader's start to the end of its first
	// pass over its caches: when its report is published after healing
	// read the cluster (or gave up on a missing CRD).
	LeaderReadySec float64        `json:"leaderReadySec"`
	Observer       stats          `json:"observer"`
	Leader         stats          `json:"actorLeader"`
	Standby        stats          `json:"actorStandby"`
	WindowSec      float64        `json:"windowSec"`
	Requests       []requestRow   `json:"requests"`
	Lists          map[string]int `json:"listsInWindow"` // by process
	Passed         bool           `json:"passed"`
}

// startRun starts a platform simulator that authorizes healing over every
// pool of v, then the observer and two actor replicas, as deploy/ runs them.
func startRun(v variant, res *result) (r *run, err error) {
	r = &run{v: v, res: res, sim: platformsim.New(platformsim.Options{})}
	if _, err := r.sim.Start(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	if err := r.sim.SetDesired(desiredFor(v), `"1-bench"`); err != nil {
		return nil, err
	}
	if r.dir, err = os.MkdirTemp(harness.dir, "run-"); err != nil {
		return nil, err
	}
	token := filepath.Join(r.dir, "agent-token")
	if err := os.WriteFile(token, []byte(platformsim.DefaultToken+"\n"), 0o600); err != nil {
		return nil, err
	}
	if r.offset, err = fileSize(harness.auditLog); err != nil {
		return nil, err
	}
	// deploy/'s environment, then what a pod gets from elsewhere: the
	// settings left blank in config.env, the token Secret's mount, the
	// in-cluster credentials (here a kubeconfig of the same ServiceAccount)
	// and the liveness file on its emptyDir. The last value of a key wins.
	env := func(deployed []string, given kube.AgentEnv) []string {
		given.PlatformURL, given.TokenFile = r.sim.URL(), token
		// Runtime settings under study (GOMAXPROCS=64, GODEBUG=gctrace=1),
		// for comparing options by hand; the results record them, and such
		// a run is never charted as what ships (chartRefusal).
		return append(slices.Clone(deployed), given.List(strings.Fields(os.Getenv(agentEnvEnv))...)...)
	}
	r.observer, err = startAgent("observer", harness.observerBin, env(harness.deployed.observer,
		kube.AgentEnv{Kubeconfig: harness.observerKubeconfig, LivenessFile: filepath.Join(r.dir, "observer.alive")}))
	if err != nil {
		return nil, err
	}
	// Pod names as a ReplicaSet gives them: new ones each run, so the
	// previous run's holder in the Lease is never taken for this one's.
	for i := range r.actors {
		pod := fmt.Sprintf("actor-7d9f6c8b5-%s", randomSuffix())
		r.actors[i], err = startAgent(pod, harness.actorBin, env(harness.deployed.actor,
			kube.AgentEnv{Kubeconfig: harness.actorKubeconfig, LivenessFile: filepath.Join(r.dir, pod+".alive"), Pod: pod}))
		if err != nil {
			return nil, err
		}
	}
	return r, nil
}

func startAgent(name, bin string, env []string) (*agent, error) {
	start := time.Now()
	p, err := kube.StartProcess(bin, env)
	if err != nil {
		return nil, err
	}
	return &agent{name: name, proc: p, start: start}, nil
}

func randomSuffix() string {
	const letters = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}

// agents are the binaries started so far.
func (r *run) agents() []*agent {
	var out []*agent
	for _, a := range []*agent{r.observer, r.actors[0], r.actors[1]} {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}

// alive fails once any binary has exited on its own.
func (r *run) alive() error {
	for _, a := range r.agents() {
		if a.proc.Exited() {
			return fmt.Errorf("%s exited early:\n%s", a.name, tail(a.proc.Output()))
		}
	}
	return nil
}

// desiredDoc is the platform's answer on /desired: healing authorized with
// a policy, over every pool, at the replicas each has, so the leader runs its
// MachineDeployment, Machine and Node caches and finds nothing to heal.
type desiredDoc struct {
	Revision          int64           `json:"revision"`
	KubernetesVersion *string         `json:"kubernetesVersion"`
	WorkerPools       []desiredPool   `json:"workerPools"`
	Execution         map[string]bool `json:"execution"`
	Healing           map[string]any  `json:"healing"`
}

type desiredPool struct {
	Name            string `json:"name"`
	MachineType     string `json:"machineType"`
	DesiredReplicas int64  `json:"desiredReplicas"`
}

func desiredFor(v variant) desiredDoc {
	doc := desiredDoc{Revision: 1, Execution: map[string]bool{"scaling": false, "upgrades": false, "healing": true},
		Healing: map[string]any{"enabled": true, "maxUnhealthy": 3, "unhealthyAfterSeconds": 300,
			"nodeStartupTimeoutSeconds": 1200, "cooldownSeconds": 600}}
	for p := range pools(v.Nodes) {
		doc.WorkerPools = append(doc.WorkerPools, desiredPool{Name: poolName(p), MachineType: "cpx31",
			DesiredReplicas: int64(poolReplicas(p, v.Nodes))})
	}
	return doc
}

// counted reports whether a beat carries the whole cluster: every pod, every
// node up to the wire's cap, and with the CRDs every pool.
func (r *run) counted(b platformsim.Beat) bool {
	pods, _ := b.Lookup("workloads.pods.total")
	n, ok := platformsim.Number(pods)
	nodes, _ := b.Lookup("nodes")
	list, _ := nodes.([]any)
	if !ok || n != int64(r.v.Pods) || len(list) != min(r.v.Nodes, wire.MaxNodes) {
		return false
	}
	if r.v.CRDs {
		have, _ := b.Lookup("pools")
		if list, _ := have.([]any); len(list) != min(pools(r.v.Nodes), wire.MaxPools) {
			return false
		}
	}
	return true
}

// describe is what a beat counted, for the error when none counted all.
func describe(b platformsim.Beat) string {
	pods, _ := b.Lookup("workloads.pods.total")
	nodes, _ := b.Lookup("nodes")
	pools, _ := b.Lookup("pools")
	list := func(v any) int { l, _ := v.([]any); return len(l) }
	return fmt.Sprintf("beat %d: %v pods, %d nodes, %d pools", b.Seq, pods, list(nodes), list(pools))
}

// awaitFullBeat waits for the observer's first beat that counted the whole
// cluster and records when it came and its size.
func (r *run) awaitFullBeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, beatWait)
	defer cancel()
	for {
		wait, stop := context.WithTimeout(ctx, time.Second)
		beat, err := r.sim.WaitBeat(wait, r.counted)
		stop()
		if err == nil {
			r.res.FirstFullBeatSec = beat.Time.Sub(r.observer.start).Seconds()
			ticks, err := cpuTicks(r.observer.proc.Pid())
			if err != nil {
				return err
			}
			r.res.FirstBeatCPUSec = float64(ticks) / clockTicks
			r.res.BeatBytes = len(beat.Body)
			first := r.sim.Beats()[0]
			r.res.FirstBeatFull = first.Seq == beat.Seq
			if !r.res.FirstBeatFull {
				logf("  observer: its first beat was partial, %.1fs after start (%s)", first.Time.Sub(r.observer.start).Seconds(), describe(first))
			}
			return nil
		}
		if err := r.alive(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			last := "no beat at all"
			if beats := r.sim.Beats(); len(beats) > 0 {
				last = "last " + describe(beats[len(beats)-1])
			}
			return fmt.Errorf("no beat counted %d pods and %d nodes within %s (%s)\nobserver output:\n%s",
				r.v.Pods, r.v.Nodes, beatWait, last, tail(r.observer.proc.Output()))
		}
	}
}

// awaitLeader finds which replica holds the Lease kubehz-system/kubehz-actor.
func (r *run) awaitLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, leadWait)
	defer cancel()
	leases := harness.admin.CoordinationV1().Leases("kubehz-system")
	for {
		l, err := leases.Get(ctx, "kubehz-actor", metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil {
			for _, a := range r.actors {
				if strings.HasPrefix(*l.Spec.HolderIdentity, a.name+"_") {
					r.leader = a
					return nil
				}
			}
		}
		if err := r.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no replica of this run holds the actor Lease within %s", leadWait)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *run) standby() *agent {
	if r.leader == r.actors[0] {
		return r.actors[1]
	}
	return r.actors[0]
}

// roles names the actor replicas by what they did in this run.
func (r *run) roles() map[string]string {
	return map[string]string{r.leader.name: "actor leader", r.standby().name: "actor standby"}
}

// awaitLeaderReady waits until the leader has finished its first pass. A
// term opens by publishing its (empty) report, reading the kubehz-actions
// ConfigMap first; the first pass over the desired state ends by publishing
// again, after healing waited for its caches' first sync. So the second read
// of that ConfigMap marks a leader whose caches are live (or whose pass gave
// up on a missing CRD, when the CRDs are not installed).
func (r *run) awaitLeaderReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	for {
		events, err := kube.ReadAudit(harness.auditLog, r.offset)
		if err != nil {
			return err
		}
		reads := 0
		for _, e := range events {
			if by(e, r.roles()) == "actor leader" && e.Verb == "get" && e.ObjectRef != nil &&
				e.ObjectRef.Resource == "configmaps" && e.ObjectRef.Name == "kubehz-actions" {
				if reads++; reads == 2 {
					r.res.LeaderReadySec = e.RequestReceived.Sub(r.leader.start).Seconds()
					return nil
				}
			}
		}
		if err := r.alive(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the actor leader did not finish its first pass within %s\nleader output:\n%s",
				readyWait, tail(r.leader.proc.Output()))
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// sample reads every binary's resident set once a second for win, and the
// CPU each used over it.
func (r *run) sample(win time.Duration) (from, to time.Time, err error) {
	from = time.Now()
	for _, a := range r.agents() {
		if a.ticks, err = cpuTicks(a.proc.Pid()); err != nil {
			return from, from, err
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for now := range tick.C {
		if err := r.alive(); err != nil {
			return from, now, err
		}
		for _, a := range r.agents() {
			rss, err := procStatus(a.proc.Pid(), "VmRSS")
			if err != nil {
				return from, now, err
			}
			a.rss = append(a.rss, rss)
		}
		if now.Sub(from) >= win {
			break
		}
	}
	to = time.Now()
	for _, a := range r.agents() {
		ticks, err := cpuTicks(a.proc.Pid())
		if err != nil {
			return from, to, err
		}
		peak, err := procStatus(a.proc.Pid(), "VmHWM")
		if err != nil {
			return from, to, err
		}
		cpuSec := float64(ticks-a.ticks) / clockTicks
		a.stats = stats{
			RSSMedianMiB: kube.MiB(kube.Median(a.rss)), RSSMaxMiB: kube.MiB(maxOf(a.rss)), PeakMiB: kube.MiB(peak),
			Millicores: 1000 * cpuSec / to.Sub(from).Seconds(), Samples: len(a.rss),
		}
	}
	return from, to, nil
}

func maxOf(xs []int64) int64 {
	var m int64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// stop sends SIGTERM to the standby, then the leader (so the standby does
// not take over and start its caches), then the observer, and closes the
// simulator. Safe to call again.
func (r *run) stop() {
	order := r.agents()
	if r.leader != nil {
		order = []*agent{r.standby(), r.leader, r.observer}
	}
	for _, a := range order {
		if a.stopped {
			continue
		}
		a.code, a.err = a.proc.Stop(stopWait)
		a.stopped = true
	}
	r.sim.Close()
}

// stopErrors names every binary that did not exit 0 on SIGTERM.
func (r *run) stopErrors() error {
	var errs []error
	for _, a := range r.agents() {
		if a.stopped && (a.err != nil || a.code != 0) {
			errs = append(errs, fmt.Errorf("%s did not stop cleanly (code %d, %w)\n%s", a.name, a.code, a.err, tail(a.proc.Output())))
		}
	}
	return errors.Join(errs...)
}

func tail(s string) string {
	const n = 4000
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

package execute_test

// The executor's fakes, the harnesses that wire an Executor to them, the
// builders of objects and documents, and the report and Event checks every
// test file of the package shares.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

const mdNamespace = "kube-system"

var (
	_ execute.Fence     = (*testkit.Fence)(nil)
	_ execute.Patcher   = (*fakeCluster)(nil)
	_ execute.MDs       = (*fakeCluster)(nil)
	_ execute.Recorder  = (*fakeRecorder)(nil)
	_ execute.Publisher = (*fakePublisher)(nil)
)

var (
	_ execute.Machines     = (*fakeMachines)(nil)
	_ execute.Nodes        = (*fakeNodes)(nil)
	_ execute.Deleter      = (*fakeWorld)(nil)
	_ execute.Pods         = (*fakePods)(nil)
	_ execute.ControlPlane = (*fakeControlPlane)(nil)
	_ execute.Patcher      = (*mdPatcher)(nil)
)

var (
	machineResource = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machines"}
	podResource     = schema.GroupResource{Resource: "pods"}
)

var mdResource = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}

// errLostLease stands for the lease fence's refusal.
var errLostLease = errors.New("lost lease: held by actor-1")

// start is when the executor under test became leader: its healing
// memory's cooldown baseline.
var start = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

type patch struct {
	Namespace, Name, Body string
}

// fakeCluster is both the MD cache and the apiserver the patches reach: a
// successful patch changes the replicas the next pass reads.
type fakeCluster struct {
	mu      sync.Mutex
	records map[string]*cluster.MachineDeployment
	// live, when set, is what a direct read sees while the cache (records)
	// lags behind it.
	live      map[string]*cluster.MachineDeployment
	getErr    error // what a direct read of one MachineDeployment answers
	gets      int
	fresh     int
	ensureErr error
	patchErr  map[string]error // by MD name
	ensures   int
	lists     int
	stops     int
	patches   []patch
}

func newCluster(records ...*cluster.MachineDeployment) *fakeCluster {
	c := &fakeCluster{records: map[string]*cluster.MachineDeployment{}, patchErr: map[string]error{}}
	for _, r := range records {
		c.records[r.Name] = r
	}
	return c
}

func (c *fakeCluster) Ensure(base, ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ensures++
	return c.ensureErr
}

func (c *fakeCluster) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stops++
}

func (c *fakeCluster) List() map[string]*cluster.MachineDeployment {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists++
	return maps.Clone(c.records)
}

func (c *fakeCluster) Get(_ context.Context, name string) (*cluster.MachineDeployment, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	if c.getErr != nil {
		return nil, c.getErr
	}
	src := c.records
	if c.live != nil {
		src = c.live
	}
	r, ok := src[name]
	if !ok {
		return nil, nil
	}
	cp := *r
	return &cp, nil
}

// Fresh is a direct List: live when set (the cache lags it), else what the
// cache holds.
func (c *fakeCluster) Fresh(context.Context) (map[string]*cluster.MachineDeployment, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fresh++
	src := c.records
	if c.live != nil {
		src = c.live
	}
	out := make(map[string]*cluster.MachineDeployment, len(src))
	for name, r := range src {
		cp := *r
		out[name] = &cp
	}
	return out, nil
}

func (c *fakeCluster) PatchMD(ctx context.Context, namespace, name string, body []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	c.patches = append(c.patches, patch{namespace, name, string(body)})
	if err := c.patchErr[name]; err != nil {
		return err
	}
	var p struct {
		Spec struct {
			Replicas int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return err
	}
	base, ok := c.records[name]
	if !ok {
		base = c.live[name] // known only to a direct read: the cache lags
	}
	r := *base
	r.Replicas = &p.Spec.Replicas
	r.ResourceVersion += "+1"
	c.records[name] = &r
	return nil
}

type event struct {
	MD      string
	Warning bool
	Reason  string
	Message string
}

type fakeRecorder struct {
	events []event
}

func (r *fakeRecorder) Event(ctx context.Context, obj execute.Object, warning bool, reason, message string) {
	r.events = append(r.events, event{obj.Namespace + "/" + obj.Name, warning, reason, message})
}

type published struct {
	Revision int64
	Actions  []wire.Action
}

type fakePublisher struct {
	calls []published
	err   error
}

func (p *fakePublisher) Publish(ctx context.Context, rev int64, actions []wire.Action) error {
	p.calls = append(p.calls, published{rev, actions})
	return p.err
}

func (p *fakePublisher) last(t *testing.T) published {
	t.Helper()
	if len(p.calls) == 0 {
		t.Fatal("nothing was published")
	}
	return p.calls[len(p.calls)-1]
}

// harness is one executor wired to fakes.
type harness struct {
	exec      *execute.Executor
	store     *store.Store
	cluster   *fakeCluster
	fence     *testkit.Fence
	events    *fakeRecorder
	publisher *fakePublisher
}

func newHarness(t *testing.T, cluster *fakeCluster) *harness {
	h := &harness{
		store: store.New(), cluster: cluster, fence: &testkit.Fence{},
		events: &fakeRecorder{}, publisher: &fakePublisher{},
	}
	h.exec = &execute.Executor{
		Base: t.Context(), Fence: h.fence, Store: h.store, MDs: cluster, Patcher: cluster,
		Events: h.events, Publisher: h.publisher, Namespace: mdNamespace, MaxReplicas: 50,
		Log: slog.New(slog.DiscardHandler),
	}
	return h
}

// fakeClock is the time the executor reads; tests step it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) advance(d time.Duration) { c.now = c.now.Add(d) }
func (c *fakeClock) set(t time.Time)         { c.now = t }

type machineDelete struct {
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
}

type podDelete struct {
	Namespace, Name string
	UID             types.UID
}

// fakeWorld is the Machines, Nodes and pods healing reads, and the
// apiserver its deletes reach: a Machine delete sets the Machine deleting,
// a pod delete removes the pod.
type fakeWorld struct {
	machines map[string]*cluster.Machine
	nodes    map[string]*cluster.Node
	// liveNodes, when set, is what a direct Node read sees while the cache
	// (nodes) lags behind it.
	liveNodes map[string]*cluster.Node
	// gotNodes, when set, is what the Node read just before a delete sees:
	// a node that came back after the direct List.
	gotNodes map[string]*cluster.Node
	// liveMachines, when set, is what a direct Machine List sees.
	liveMachines map[string]*cluster.Machine
	freshErr     error // fails every direct List
	freshLists   int
	// liveRV, when set for a machine, is its resourceVersion on the
	// apiserver while the cache still holds an older one.
	liveRV map[string]string
	pods   []heal.Pod

	machineEnsureErr, nodeEnsureErr error

	deleteErr    map[string]error // by machine name
	podDeleteErr map[string]error // by "namespace/name"
	podsErr      error
	// slow, when set, runs inside every delete: an apiserver that takes its
	// time, so a test's clock can move while the request is in flight.
	slow func()

	machineEnsures, machineLists, machineStops  int
	nodeEnsures, nodeLists, nodeStops, nodeGets int
	podLists                                    int
	machineDeletes                              []machineDelete
	podDeletes                                  []podDelete
}

func newWorld() *fakeWorld {
	return &fakeWorld{
		machines: map[string]*cluster.Machine{}, nodes: map[string]*cluster.Node{},
		liveRV: map[string]string{}, deleteErr: map[string]error{}, podDeleteErr: map[string]error{},
	}
}

func (w *fakeWorld) add(ms ...*cluster.Machine) {
	for _, m := range ms {
		w.machines[m.Name] = m
	}
}

func (w *fakeWorld) addNodes(ns ...*cluster.Node) {
	for _, n := range ns {
		w.nodes[n.Name] = n
	}
}

// calls is every call healing or upgrades made on the world, by kind.
func (w *fakeWorld) calls() map[string]int {
	return map[string]int{
		"machineEnsure": w.machineEnsures, "machineList": w.machineLists,
		"nodeEnsure": w.nodeEnsures, "nodeList": w.nodeLists, "nodeGet": w.nodeGets,
		"podList": w.podLists, "machineDelete": len(w.machineDeletes), "podDelete": len(w.podDeletes),
	}
}

func (w *fakeWorld) DeleteMachine(ctx context.Context, namespace, name string, uid types.UID, rv string) error {
	w.machineDeletes = append(w.machineDeletes, machineDelete{namespace, name, uid, rv})
	if w.slow != nil {
		w.slow()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.deleteErr[name]; err != nil {
		return err
	}
	m, ok := w.machines[name]
	if !ok || namespace != m.Namespace {
		return apierrors.NewNotFound(machineResource, name)
	}
	current := m.ResourceVersion
	if live, ok := w.liveRV[name]; ok {
		current = live
	}
	if uid != m.UID || rv != current {
		return apierrors.NewConflict(machineResource, name, fmt.Errorf("precondition failed: uid %q rv %q", uid, rv))
	}
	cp := *m
	cp.Deleting = true
	cp.ResourceVersion = current + "1"
	w.machines[name] = &cp
	delete(w.liveRV, name)
	return nil
}

func (w *fakeWorld) DeletePod(ctx context.Context, namespace, name string, uid types.UID) error {
	w.podDeletes = append(w.podDeletes, podDelete{namespace, name, uid})
	if w.slow != nil {
		w.slow()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.podDeleteErr[namespace+"/"+name]; err != nil {
		return err
	}
	i := slices.IndexFunc(w.pods, func(p heal.Pod) bool { return p.Namespace == namespace && p.Name == name })
	if i < 0 {
		return apierrors.NewNotFound(podResource, name)
	}
	if uid != "" && w.pods[i].UID != uid {
		return apierrors.NewConflict(podResource, name, fmt.Errorf("precondition failed: uid %q", uid))
	}
	w.pods = slices.Delete(w.pods, i, i+1)
	return nil
}

// fakeMachines is the world's Machine cache.
type fakeMachines struct{ w *fakeWorld }

func (c *fakeMachines) Ensure(base, ctx context.Context) error {
	c.w.machineEnsures++
	return c.w.machineEnsureErr
}

func (c *fakeMachines) Stop() { c.w.machineStops++ }

func (c *fakeMachines) List() []*cluster.Machine {
	c.w.machineLists++
	out := make([]*cluster.Machine, 0, len(c.w.machines))
	for _, name := range slices.Sorted(maps.Keys(c.w.machines)) {
		cp := *c.w.machines[name]
		out = append(out, &cp)
	}
	return out
}

// Fresh is a direct List: liveMachines when set (the cache lags it), else
// what the cache holds.
func (c *fakeMachines) Fresh(context.Context) ([]*cluster.Machine, error) {
	c.w.freshLists++
	if c.w.freshErr != nil {
		return nil, c.w.freshErr
	}
	src := c.w.machines
	if c.w.liveMachines != nil {
		src = c.w.liveMachines
	}
	out := make([]*cluster.Machine, 0, len(src))
	for _, name := range slices.Sorted(maps.Keys(src)) {
		cp := *src[name]
		out = append(out, &cp)
	}
	return out, nil
}

// fakeNodes is the world's Node cache and direct Node read.
type fakeNodes struct{ w *fakeWorld }

func (c *fakeNodes) Ensure(base, ctx context.Context) error {
	c.w.nodeEnsures++
	return c.w.nodeEnsureErr
}

func (c *fakeNodes) Stop() { c.w.nodeStops++ }

func (c *fakeNodes) List() map[string]*cluster.Node {
	c.w.nodeLists++
	out := make(map[string]*cluster.Node, len(c.w.nodes))
	for name, n := range c.w.nodes {
		cp := *n
		out[name] = &cp
	}
	return out
}

func (c *fakeNodes) Get(_ context.Context, name string) (*cluster.Node, error) {
	c.w.nodeGets++
	src := c.w.nodes
	if c.w.liveNodes != nil {
		src = c.w.liveNodes
	}
	if c.w.gotNodes != nil {
		src = c.w.gotNodes
	}
	n, ok := src[name]
	if !ok {
		return nil, nil
	}
	cp := *n
	return &cp, nil
}

// Fresh is a direct List: liveNodes when set, else what the cache holds.
func (c *fakeNodes) Fresh(context.Context) (map[string]*cluster.Node, error) {
	c.w.freshLists++
	if c.w.freshErr != nil {
		return nil, c.w.freshErr
	}
	src := c.w.nodes
	if c.w.liveNodes != nil {
		src = c.w.liveNodes
	}
	out := make(map[string]*cluster.Node, len(src))
	for name, n := range src {
		cp := *n
		out[name] = &cp
	}
	return out, nil
}

// fakePods lists the world's pods bound to a node, as a field selector on
// spec.nodeName would.
type fakePods struct{ w *fakeWorld }

func (p *fakePods) PodsOn(_ context.Context, node string) ([]heal.Pod, error) {
	p.w.podLists++
	if p.w.podsErr != nil {
		return nil, p.w.podsErr
	}
	var out []heal.Pod
	for _, pod := range p.w.pods {
		if pod.NodeName == node {
			out = append(out, pod)
		}
	}
	return out, nil
}

// mdPatcher applies merge patches to the fake MachineDeployments: replicas
// and the template's kubelet, whichever the body sets, bumping the
// resourceVersion.
type mdPatcher struct {
	c       *fakeCluster
	err     map[string]error
	patches []patch
}

func (p *mdPatcher) PatchMD(ctx context.Context, namespace, name string, body []byte) error {
	p.patches = append(p.patches, patch{namespace, name, string(body)})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.err[name]; err != nil {
		return err
	}
	var b struct {
		Spec struct {
			Replicas *int64 `json:"replicas"`
			Template *struct {
				Spec struct {
					Versions struct {
						Kubelet string `json:"kubelet"`
					} `json:"versions"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return err
	}
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	base, ok := p.c.records[name]
	if !ok {
		return apierrors.NewNotFound(mdResource, name)
	}
	r := *base
	if b.Spec.Replicas != nil {
		r.Replicas = b.Spec.Replicas
	}
	if b.Spec.Template != nil {
		r.Kubelet = b.Spec.Template.Spec.Versions.Kubelet
	}
	r.ResourceVersion += "+1"
	p.c.records[name] = &r
	return nil
}

// fakeControlPlane is every source of the control plane's version: /version
// answers version, and each control-plane Node in nodes reports its
// kubelet.
type fakeControlPlane struct {
	version string
	nodes   map[string]string // Node name → kubelet version
	err     error
	calls   int
}

func (v *fakeControlPlane) ControlPlaneVersions(context.Context) ([]upgrade.VersionReading, error) {
	v.calls++
	if v.err != nil {
		return nil, v.err
	}
	var out []upgrade.VersionReading
	for _, name := range slices.Sorted(maps.Keys(v.nodes)) {
		out = append(out, upgrade.VersionReading{Source: "Node " + name, Version: v.nodes[name]})
	}
	return append(out, upgrade.VersionReading{Source: "/version", Version: v.version}), nil
}

// healHarness is one executor with every field set, wired to fakes.
type healHarness struct {
	*harness
	world   *fakeWorld
	clock   *fakeClock
	version *fakeControlPlane
	patcher *mdPatcher
	logs    *testkit.Logs
}

func newHealHarness(t *testing.T, mds ...*cluster.MachineDeployment) *healHarness {
	t.Helper()
	h := &healHarness{
		harness: newHarness(t, newCluster(mds...)),
		world:   newWorld(),
		clock:   &fakeClock{now: start},
		version: &fakeControlPlane{version: "v1.35.2"},
		logs:    &testkit.Logs{},
	}
	h.patcher = &mdPatcher{c: h.cluster, err: map[string]error{}}
	h.exec = h.newExecutor(t, heal.NewMemory(start))
	return h
}

// newExecutor builds an executor on the harness's fakes with mem, as a new
// leadership term would.
func (h *healHarness) newExecutor(t *testing.T, mem *heal.Memory) *execute.Executor {
	return &execute.Executor{
		Base: t.Context(), Fence: h.fence, Store: h.store, MDs: h.cluster, Patcher: h.patcher,
		Events: h.events, Publisher: h.publisher, Namespace: mdNamespace, MaxReplicas: 50,
		Log:      h.logs.Logger(),
		Machines: &fakeMachines{h.world}, Nodes: &fakeNodes{h.world}, Deleter: h.world,
		Pods: &fakePods{h.world}, ControlPlane: h.version,
		HealMemory: mem, EvictionTimeout: 300 * time.Second, Now: h.clock.Now,
		// Limits that never bind, so the document's policy is the
		// contract's: the local limits have their own tests.
		HealLimits: heal.Limits{MaxInFlight: 1000},
	}
}

// trustControlPlane gives the executor's gate two reads of what the fake
// answers now, 10 s and 5 s before the clock, as a term that has watched a
// steady control plane would hold: the next pass vouches for it.
func (h *healHarness) trustControlPlane() {
	h.exec.CPGate = upgrade.ControlPlaneGate{}
	for _, ago := range []time.Duration{10 * time.Second, 5 * time.Second} {
		readings, err := h.version.ControlPlaneVersions(context.Background())
		h.exec.CPGate.Observe(upgrade.VersionSample{At: h.clock.Now().Add(-ago), Readings: readings, Err: err})
	}
	h.version.calls = 0
}

// rollingHarness has pool-a (2 replicas, kubelet v1.34.9) with its two
// machines joined at v1.34.9, and a control plane at v1.35.2 that the
// executor has read steady for 10 s.
func rollingHarness(t *testing.T, mds ...*cluster.MachineDeployment) *healHarness {
	t.Helper()
	h := newHealHarness(t, append([]*cluster.MachineDeployment{poolMD("pool-a", 2)}, mds...)...)
	h.world.add(machine("pool-a-m1", "pool-a", "node-1"), machine("pool-a-m2", "pool-a", "node-2"))
	h.trustControlPlane()
	return h
}

// seed leaves the store as a scaling pass of revision rev left it.
func (h *harness) seed(rev int64, actions ...wire.Action) {
	h.store.Begin(rev)
	for _, a := range actions {
		h.store.Upsert(a)
	}
}

package execute_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/shared/wire"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const mdNamespace = "kube-system"

var (
	_ execute.Fence     = (*fakeFence)(nil)
	_ execute.Patcher   = (*fakeCluster)(nil)
	_ execute.MDs       = (*fakeCluster)(nil)
	_ execute.Recorder  = (*fakeRecorder)(nil)
	_ execute.Publisher = (*fakePublisher)(nil)
)

// errLostLease stands for the lease fence's refusal.
var errLostLease = errors.New("lost lease: held by actor-1")

// fakeFence grants every write a short deadline, or refuses with err.
type fakeFence struct {
	err   error
	calls int
}

func (f *fakeFence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	f.calls++
	if f.err != nil {
		return nil, nil, f.err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	return wctx, cancel, nil
}

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
	fence     *fakeFence
	events    *fakeRecorder
	publisher *fakePublisher
}

func newHarness(t *testing.T, cluster *fakeCluster) *harness {
	h := &harness{
		store: store.New(nil), cluster: cluster, fence: &fakeFence{},
		events: &fakeRecorder{}, publisher: &fakePublisher{},
	}
	h.exec = &execute.Executor{
		Base: t.Context(), Fence: h.fence, Store: h.store, MDs: cluster, Patcher: cluster,
		Events: h.events, Publisher: h.publisher, Namespace: mdNamespace, MaxReplicas: 50,
		Log: slog.New(slog.DiscardHandler),
	}
	return h
}

func md(name string, replicas int64) *cluster.MachineDeployment {
	return &cluster.MachineDeployment{Namespace: mdNamespace, Name: name, ResourceVersion: "5", UID: types.UID("uid-" + name), Replicas: &replicas}
}

package safety_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

var (
	_ execute.Fence     = (*fence)(nil)
	_ execute.Patcher   = (*apiserver)(nil)
	_ execute.Deleter   = (*apiserver)(nil)
	_ execute.Pods      = (*apiserver)(nil)
	_ execute.Version   = (*apiserver)(nil)
	_ execute.Recorder  = (*apiserver)(nil)
	_ execute.Publisher = (*apiserver)(nil)
	_ execute.MDs       = mdCache{}
	_ execute.Machines  = machineCache{}
	_ execute.Nodes     = nodeCache{}
)

var errLostLease = errors.New("lost lease: held by another replica")

type grantKey struct{}

// fence grants writes while this replica leads; refuseAfter < 0 means it
// never starts refusing within the pass, else it grants that many more.
type fence struct {
	leading     bool
	refuseAfter int
	next        int
	live        map[int]bool // grants handed out and not yet cancelled
	refused     int
}

func (f *fence) Write(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if f.leading && f.refuseAfter == 0 {
		f.leading = false // the lease was lost mid-pass
	}
	if !f.leading {
		f.refused++
		return nil, nil, errLostLease
	}
	if f.refuseAfter > 0 {
		f.refuseAfter--
	}
	f.next++
	id := f.next
	f.live[id] = true
	wctx, cancel := context.WithCancel(context.WithValue(ctx, grantKey{}, id))
	return wctx, func() { delete(f.live, id); cancel() }, nil
}

// granted says ctx carries a grant that is still live while leading.
func (f *fence) granted(ctx context.Context) bool {
	id, ok := ctx.Value(grantKey{}).(int)
	return ok && f.live[id] && f.leading && ctx.Err() == nil
}

// faults are one scenario's failure rates, each a probability per call.
type faults struct {
	ensure, get, pods, write, version, publish float64
}

// apiserver is the fake cluster API the executor's seams reach: it answers
// reads from the world, hands every write to the checker before applying
// it, and fails calls at the scenario's rates.
type apiserver struct {
	w     *world
	r     *rand.Rand
	f     faults
	fence *fence
	check *checker
	cache *informers // what each cache's List serves
	reads int        // every read call, for the closed-gate check
	trace *[]string  // every answered write, when a test keeps them

	// slowest is the longest one delete may take to answer; 0 answers at
	// once.
	slowest time.Duration
}

func (a *apiserver) fail(rate float64) bool { return rate > 0 && chance(a.r, rate) }

var (
	mdGR      = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machinedeployments"}
	machineGR = schema.GroupResource{Group: "cluster.k8s.io", Resource: "machines"}
	podGR     = schema.GroupResource{Resource: "pods"}
)

func notFound(gr schema.GroupResource, name string) error { return apierrors.NewNotFound(gr, name) }

func conflict(gr schema.GroupResource, name string) error {
	return apierrors.NewConflict(gr, name, errors.New("the object has been modified"))
}

// writeError is a random failure of a write: RBAC, a stale precondition,
// an object gone, or a blip.
func (a *apiserver) writeError(gr schema.GroupResource, name string) error {
	switch a.r.IntN(4) {
	case 0:
		return apierrors.NewForbidden(gr, name, errors.New("RBAC says no"))
	case 1:
		return conflict(gr, name)
	case 2:
		return notFound(gr, name)
	}
	return errors.New("connection reset by peer")
}

func (a *apiserver) PodsOn(ctx context.Context, nodeName string) ([]heal.Pod, error) {
	a.reads++
	if a.fail(a.f.pods) {
		if chance(a.r, 0.3) {
			return nil, apierrors.NewForbidden(podGR, "", errors.New("RBAC says no"))
		}
		return nil, errors.New("list pods: timeout")
	}
	var out []heal.Pod
	for _, p := range a.w.pods {
		if p.node == nodeName {
			out = append(out, heal.Pod{Namespace: p.ns, Name: p.name, UID: types.UID(p.uid), NodeName: p.node, Terminating: p.terminating})
		}
	}
	return out, nil
}

func (a *apiserver) Event(context.Context, execute.Object, bool, string, string) {}

func (a *apiserver) Publish(context.Context, int64, []wire.Action) error {
	if a.fail(a.f.publish) {
		return errors.New("configmap write failed")
	}
	return nil
}

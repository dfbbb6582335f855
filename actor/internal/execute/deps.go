package execute

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/wire"
)

// Fence hands out a context for one write while this process leads.
type Fence interface {
	Write(ctx context.Context) (context.Context, context.CancelFunc, error)
}

// Patcher sends one merge patch to a MachineDeployment.
type Patcher interface {
	PatchMD(ctx context.Context, namespace, name string, body []byte) error
}

// Deleter sends the two deletes healing makes: a Machine with UID and
// resourceVersion preconditions, and a stuck pod with grace 0 and a UID
// precondition.
type Deleter interface {
	DeleteMachine(ctx context.Context, namespace, name string, uid types.UID, resourceVersion string) error
	DeletePod(ctx context.Context, namespace, name string, uid types.UID) error
}

// Recorder writes a Kubernetes Event on a MachineDeployment or a Machine.
type Recorder interface {
	Event(ctx context.Context, obj Object, warning bool, reason, message string)
}

// Object names what an Event is about: a MachineDeployment or a Machine in
// the MD namespace.
type Object struct {
	Kind, Namespace, Name, ResourceVersion string
	UID                                    types.UID
}

// Publisher hands the reports to the observer.
type Publisher interface {
	Publish(ctx context.Context, rev int64, actions []wire.Action) error
}

// Progress hears, before each pool's step and each publish, that the pass
// is still moving; nil means nobody listens.
type Progress interface {
	Step()
}

// Cache is an informer that runs only while a capability needs it: Ensure
// starts it and waits for its first list, Stop ends it.
type Cache interface {
	Ensure(base, ctx context.Context) error
	Stop()
}

// ByName is a Cache of records read by name, with the two direct reads
// that confirm a decision: a List of every object and a Get of one.
type ByName[R any] interface {
	Cache
	List() map[string]R
	Get(ctx context.Context, name string) (R, error)
	Fresh(ctx context.Context) (map[string]R, error)
}

// MDs is the on-demand MachineDeployment cache.
type MDs interface {
	ByName[*cluster.MachineDeployment]
}

// Machines is the on-demand Machine cache, and a direct List. Unlike MDs
// and Nodes it is never read by name: decisions walk every Machine (to
// resolve pools and count what is deleting), and a delete carries the UID
// and resourceVersion it was decided on as preconditions instead of a
// re-read, so there is no Get and the records stay a slice.
type Machines interface {
	Cache
	List() []*cluster.Machine
	Fresh(ctx context.Context) ([]*cluster.Machine, error)
}

// Nodes is the on-demand Node cache; a heal re-reads its node with Get.
type Nodes interface {
	ByName[*cluster.Node]
}

// Pods lists the pods bound to one node.
type Pods interface {
	PodsOn(ctx context.Context, node string) ([]heal.Pod, error)
}

// ControlPlane reads every source of the control plane's version the actor can
// see (each control-plane Node's kubelet, each kube-apiserver static pod's
// image tag, /version); an error means one of them could not be read. The
// upgrade pre-flight checks the target against the version the gate
// vouches for.
type ControlPlane interface {
	ControlPlaneVersions(ctx context.Context) ([]upgrade.VersionReading, error)
}

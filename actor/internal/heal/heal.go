// Package heal decides self-healing and the eviction unwedge that follows a
// heal (docs/contract.md#healing) as pure functions: the observed Machines,
// Nodes and pools, the policy, what this term remembers and the time go in; the
// reports and the deletes to make come out. It makes no client calls, reads no
// clock and logs nothing; the executor around it reads, fences and deletes.
//
// Every rule leans toward doing nothing: a storm of unhealthy workers
// deletes nothing, a disruption already in flight uses up the budget, a
// pool heals at most once per cooldown, and a machine that is control plane,
// unowned or the autoscaler's is refused.
package heal

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// MinWindow floors both detection windows, so a zero or junk value in the
// policy can only make healing slower, never faster.
const MinWindow = 60 * time.Second

// Machine is the compact record of one Machine.
type Machine struct {
	Name            string
	UID             types.UID
	ResourceVersion string
	// Pool is the owning MachineDeployment as resolved
	// (docs/contract.md#machine-pools), "" when nothing owns it.
	Pool string
	// ControlPlane is set when metadata.labels or spec.metadata.labels carry
	// a control-plane key.
	ControlPlane bool
	Created      time.Time // zero when unknown
	Deleting     bool
	NodeName     string // status.nodeRef.name; "" until the node joined
}

// Ready condition statuses, as the Node reports them.
const (
	ReadyTrue    = "True"
	ReadyFalse   = "False"
	ReadyUnknown = "Unknown"
)

// Node is the compact record of one Node.
type Node struct {
	Name         string
	ControlPlane bool
	// Ready is the Ready condition's status, "" when the node has none.
	Ready string
	// Since is the Ready condition's lastTransitionTime; the time unhealthy
	// is measured from, so nothing is lost when the actor restarts.
	Since time.Time
	// OwnerUID and OwnerMachine are machine-controller's marks naming the
	// Machine behind the Node: the machine-controller/owned-by label (its
	// UID) and the cluster.k8s.io/machine annotation ("namespace/name").
	// They tie the two together before the Machine's status.nodeRef does.
	OwnerUID     types.UID
	OwnerMachine string
}

// MD is what the refusals read from a pool's MachineDeployment.
type MD struct {
	ControlPlane string // why it looks like a control-plane pool, or ""
	Autoscaler   string // the cluster-autoscaler annotation found, or ""
}

// Observed is one consistent read of the cluster.
type Observed struct {
	Namespace string // the Machines' and MachineDeployments'
	Machines  []Machine
	Nodes     map[string]Node // by name
	MDs       map[string]MD   // by name
	// Removing is how many Machines machine-controller has yet to take
	// down: those past their pool's spec.replicas, and those this pass's
	// scale-downs and roll take down. It marks them deleting only once it
	// gets to them, so no read shows them yet, and they count as in flight.
	// A heal in a pool past its count counts in full too: deleting one of
	// the pool's Machines need not leave the controller one fewer to
	// remove, as a MachineSet not yet lowered, or the new one of a roll,
	// recreates it.
	Removing int
}

// Policy is the effective healing policy of one desired revision.
type Policy struct {
	MaxUnhealthy   int
	UnhealthyAfter time.Duration // floored at MinWindow
	StartupTimeout time.Duration // floored at MinWindow
	Cooldown       time.Duration // no floor: 0 means no pause
	Revision       int64
	// Named is true for the pools the desired document names, the first
	// desired.PoolsPerPass of them by name, and false for those it names past
	// them (NamedPools). A machine in any other pool is refused: the actor
	// touches only what the platform named, whatever machine-controller
	// holds besides.
	Named map[string]bool
	// Limited says which of the document's values the local limits
	// replaced, and with what; "" when the document stayed within them.
	Limited string
}

// Memory is what one leadership term remembers between passes. It is never
// persisted: a new term starts a full cooldown and tracks no machines, which
// only ever makes the next term more careful.
type Memory struct {
	// Since is when this replica became leader: the cooldown baseline, so a
	// failover can never skip a cooldown.
	Since time.Time
	// LastHeal is when each pool last had a machine deleted by this term.
	LastHeal map[string]time.Time
	// Tracked holds the machines this term heal-deleted, by name, for the
	// eviction unwedge.
	Tracked map[string]*Tracked
	// Unsure holds, by name, the machines whose delete this term sent but
	// never had answered, until a read settles whether it landed (Settle).
	Unsure map[string]*Tracked
	// Refused holds, by name, the machines whose delete this term had
	// refused, until they are gone (ForgetRefusals).
	Refused map[string]Refusal
}

// Refusal is a delete the apiserver refused: it is not asked again for a
// cooldown, and the report says the same meanwhile.
type Refusal struct {
	UID    types.UID
	At     time.Time
	Detail string
}

// Tracked is one machine this term deleted, followed until it is gone.
type Tracked struct {
	UID       types.UID
	Node      string // "" for a joinless heal: nothing to unwedge
	Cause     string
	DeletedAt time.Time
	// Attempted is set once the unwedge has fired: once per machine, ever.
	Attempted bool
}

// NewMemory starts a term's memory at now.
func NewMemory(now time.Time) *Memory {
	return &Memory{Since: now, LastHeal: map[string]time.Time{}, Tracked: map[string]*Tracked{}, Unsure: map[string]*Tracked{},
		Refused: map[string]Refusal{}}
}

// lastHeal is the cooldown baseline of pool: its last heal in this term, or
// the term's start if later.
func (m *Memory) lastHeal(pool string) time.Time {
	if t, ok := m.LastHeal[pool]; ok && t.After(m.Since) {
		return t
	}
	return m.Since
}

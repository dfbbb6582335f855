package upgrade

import (
	"kubehz.dev/agent/actor/internal/refuse"
	"kubehz.dev/agent/shared/wire"
)

// Patch is one write: set spec.template.spec.versions.kubelet of the
// MachineDeployment MD to Target.
type Patch struct {
	refuse.MDPatch
	From        string // the MD's kubelet as read
	Target      string // the desired version as received, trimmed
	Unavailable int    // Machines the roll may take down at once (Rollout.Unavailable)
}

// Removes is how many Machines p takes down before any read shows them
// deleting: its Unavailable, when it may have landed
// (refuse.MayHaveLanded). machine-controller acts on the new template only
// once the patch reaches it, so healing in the same pass counts them as in
// flight, as it does a scale-down's.
func (p Patch) Removes(sent bool, err error) int {
	if !refuse.MayHaveLanded(sent, err) {
		return 0
	}
	return p.Unavailable
}

// Body is the JSON merge patch to send (with the executor's field manager): the kubelet
// version, with the decided resourceVersion as its precondition when one was
// read.
func (p Patch) Body() []byte {
	type versions struct {
		Kubelet string `json:"kubelet"`
	}
	type machineSpec struct {
		Versions versions `json:"versions"`
	}
	type template struct {
		Spec machineSpec `json:"spec"`
	}
	type spec struct {
		Template template `json:"template"`
	}
	return p.MergePatch(spec{Template: template{Spec: machineSpec{Versions: versions{Kubelet: p.Target}}}})
}

// Outcome is the report after step's patch was sent and answered with err.
// halt says the rest of the pass must stop: later pools are reported with
// Queued, and the plan's retry already asks for another pass.
//
// On success the report stays the in-progress one the step carried, and the
// caller records the roll with Started. A Conflict (the resourceVersion the
// decision was made on is stale) or a NotFound (the MD went away) drops the
// decision: the pool is pending and the next pass decides again from a
// fresh read, without halting. Any other error fails the pool and halts.
// A step without a Patch has nothing to report beyond its Action.
func Outcome(step Step, err error) (a wire.Action, halt bool) {
	a = step.Action
	p := step.Patch
	if p == nil || err == nil {
		return a, false
	}
	return p.Refused(a, err)
}

// Started records in mem the "from" of a roll whose patch succeeded, so the
// pool's progress and final reports name the version it came from. The
// caller calls it, not Outcome, because Outcome only maps an answer to a
// report. A nil mem or patch records nothing.
func Started(mem RolledFrom, p *Patch) {
	if mem == nil || p == nil {
		return
	}
	mem[p.MD] = p.From
}

// Queued is the report for a pool left untouched because an earlier pool in
// the same pass failed to write.
func Queued(pool string, rev int64) wire.Action {
	return action(pool, wire.StatusPending, refuse.Queued, rev)
}

package refuse

import (
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/shared/wire"
)

// Queued is the detail of a target left untouched because an earlier write
// in the same pass failed: every capability halts the same way.
const Queued = "queued behind an earlier failure in this pass; will retry next poll"

// MDPatchRule is the RBAC grant a MachineDeployment patch needs.
func MDPatchRule(namespace string) string {
	return fmt.Sprintf("the actor's Role (deploy/actor) must grant patch on machinedeployments.cluster.k8s.io in namespace %q", namespace)
}

// MachineDeleteRule is the RBAC grant a Machine delete needs.
func MachineDeleteRule(namespace string) string {
	return fmt.Sprintf("deploy/actor's Role must grant delete on machines.cluster.k8s.io in namespace %q", namespace)
}

// StaleWrite reports whether err says the write was decided on a stale read:
// a failed precondition (409) or an object gone since it was read (404). The
// decision is dropped, not retried blindly, and the next pass decides again.
func StaleWrite(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsNotFound(err)
}

// WriteFailed is the detail of a write the apiserver refused, "<verb>
// failed: <error>". A Forbidden leads with the RBAC rule that is missing: the
// wire cuts a detail at 256 UTF-16 units, and the apiserver's own text is
// long, so the hint must come first to survive.
func WriteFailed(verb string, err error, rule string) string {
	if apierrors.IsForbidden(err) {
		return fmt.Sprintf("%s failed: RBAC: %s: %s", verb, rule, Sanitize(err.Error()))
	}
	return verb + " failed: " + Sanitize(err.Error())
}

// MDPatch is where a decided MachineDeployment patch goes, and the read it
// was decided on. Scaling's and upgrades' patches each carry one.
type MDPatch struct {
	MD        string
	Namespace string
	// ResourceVersion is the version the decision was made on. The patch
	// carries it as a precondition, so a write decided on a stale read is
	// refused by the apiserver with 409 instead of applied.
	ResourceVersion string
}

// MergePatch is the JSON merge patch that sets spec, with the decided
// resourceVersion as its precondition when one was read.
func (p MDPatch) MergePatch(spec any) []byte {
	type meta struct {
		ResourceVersion string `json:"resourceVersion"`
	}
	body := struct {
		Metadata *meta `json:"metadata,omitempty"`
		Spec     any   `json:"spec"`
	}{Spec: spec}
	if p.ResourceVersion != "" {
		body.Metadata = &meta{ResourceVersion: p.ResourceVersion}
	}
	out, _ := json.Marshal(body) // cannot fail: every spec sent holds strings and integers only
	return out
}

// Refused is the report a after the patch was answered with err, and whether
// the pass halts. A stale write leaves the pool pending, for the next pass to
// decide again from a fresh read, and does not halt: every other patch
// carries its own precondition and cannot be applied on a stale read either.
// Any other error fails the pool and halts.
func (p MDPatch) Refused(a wire.Action, err error) (wire.Action, bool) {
	if StaleWrite(err) {
		a.Status = wire.StatusPending
		a.Detail = fmt.Sprintf("stale read; re-evaluating next poll (MachineDeployment %q changed since it was read)", p.MD)
		return a, false
	}
	a.Status = wire.StatusFailed
	a.Detail = WriteFailed("patch", err, MDPatchRule(p.Namespace))
	return a, true
}

// MayHaveLanded reports whether a write may have been applied: the fence
// let it go (sent), and its answer is a success or leaves that open
// (Unsure). What a scale-down or a roll takes down counts as in flight for
// the rest of the pass exactly then.
func MayHaveLanded(sent bool, err error) bool { return sent && (err == nil || Unsure(err)) }

// Unsure reports whether a failed write's err leaves open that the apiserver
// applied it: anything but a definite refusal (a 4xx status).
func Unsure(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // the connection, the deadline: no answer at all
	}
	code := status.Status().Code
	return code >= 500 || code == 0 || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

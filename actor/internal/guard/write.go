package guard

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// wire cuts a detail at 256 code points, and the apiserver's own text is
// long, so the hint must come first to survive.
func WriteFailed(verb string, err error, rule string) string {
	if apierrors.IsForbidden(err) {
		return fmt.Sprintf("%s failed: RBAC: %s: %s", verb, rule, Sanitize(err.Error()))
	}
	return verb + " failed: " + Sanitize(err.Error())
}

// Package refuse holds the refusal rules every capability shares: what marks a
// control-plane pool, node or machine, what marks a pool cluster-autoscaler
// owns (docs/contract.md#refusals), how error text is cut to fit a report, and
// the precondition a MachineDeployment patch carries so the apiserver refuses
// one decided on a stale read.
// The rules are biased toward refusing: a worker with an unlucky name is left
// alone, a control-plane object is never touched.
package refuse

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"kubehz.dev/agent/shared/printable"
)

// The label keys that mark a control-plane node, machine or pool. Presence is
// enough; the value is never looked at.
var controlPlaneLabels = []string{
	"node-role.kubernetes.io/control-plane",
	"node-role.kubernetes.io/master",
}

// Substrings of the lower-cased MD name that mark a control-plane pool.
var controlPlaneNameParts = []string{"control-plane", "controlplane", "master"}

// autoscalerAnnotations are the keys cluster-autoscaler's Cluster API
// provider reads, under the legacy and the current group. Any one of them
// means the autoscaler owns the replica count.
var autoscalerAnnotations = []string{
	"cluster.k8s.io/cluster-api-autoscaler-node-group-min-size",
	"cluster.k8s.io/cluster-api-autoscaler-node-group-max-size",
	"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size",
	"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size",
}

// PoolLabels is what the control-plane test reads from a MachineDeployment:
// its name and its four label maps, from the object's own to the innermost
// template's.
type PoolLabels struct {
	Name                   string
	Labels                 map[string]string // metadata.labels
	TemplateLabels         map[string]string // spec.template.metadata.labels
	TemplateSpecMetaLabels map[string]string // spec.template.spec.metadata.labels
	TemplateSpecLabels     map[string]string // spec.template.spec.labels
}

// ControlPlaneReason says why the pool might be a control-plane pool, or ""
// when nothing marks it.
func ControlPlaneReason(p PoolLabels) string {
	maps := []struct {
		path   string
		labels map[string]string
	}{
		{"metadata.labels", p.Labels},
		{"spec.template.metadata.labels", p.TemplateLabels},
		{"spec.template.spec.metadata.labels", p.TemplateSpecMetaLabels},
		{"spec.template.spec.labels", p.TemplateSpecLabels},
	}
	for _, m := range maps {
		if key := ControlPlaneLabel(m.labels); key != "" {
			return fmt.Sprintf("label %s in %s", key, m.path)
		}
	}
	name := strings.ToLower(p.Name)
	for _, part := range controlPlaneNameParts {
		if strings.Contains(name, part) {
			return fmt.Sprintf("name contains %q", part)
		}
	}
	// A whole segment, so "prod-cp-1" matches but the Hetzner type in
	// "cpx31-workers" does not.
	segments := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' || r == '_' })
	for _, s := range segments {
		if s == "cp" {
			return `name has the segment "cp"`
		}
	}
	return ""
}

// ControlPlaneLabel returns the first control-plane label key present in
// labels, or "". A Node is control plane when its labels have one; a
// Machine when its metadata.labels or spec.metadata.labels do.
func ControlPlaneLabel(labels map[string]string) string {
	for _, key := range controlPlaneLabels {
		if _, ok := labels[key]; ok {
			return key
		}
	}
	return ""
}

// ControlPlaneLabelKeys returns the label keys that mark control plane, so
// a reader can select control-plane Nodes by each of them.
func ControlPlaneLabelKeys() []string { return slices.Clone(controlPlaneLabels) }

// AutoscalerKey returns the first cluster-autoscaler annotation key present
// in annotations, in a fixed order, or "" when the autoscaler does not own
// the MachineDeployment.
func AutoscalerKey(annotations map[string]string) string {
	for _, key := range autoscalerAnnotations {
		if _, ok := annotations[key]; ok {
			return key
		}
	}
	return ""
}

// errorRunes is how many code points of an error's text a detail keeps.
const errorRunes = 160

// Sanitize makes outside text (an error, a version as sent) fit a detail:
// line breaks become spaces, every other rune a terminal would obey (ESC,
// U+009B, a bidi override) becomes a visible escape, so the beat, the
// reports ConfigMap, `actor status` and Events all show the same harmless
// text, and the result is cut at 160 code points, with "…" appended when cut.
func Sanitize(s string) string {
	s = printable.String(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s))
	if utf8.RuneCountInString(s) <= errorRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == errorRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

package scale

import (
	"fmt"
	"strings"
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

// LooksControlPlane reports whether md might be a control-plane pool
// (CONTRACT §4.2). The test is biased toward refusing: a worker pool with an
// unlucky name is refused, a control-plane pool is never scaled.
func LooksControlPlane(md MD) bool { return controlPlaneReason(md) != "" }

// controlPlaneReason says why md looks like a control-plane pool, or "".
func controlPlaneReason(md MD) string {
	maps := []struct {
		path   string
		labels map[string]string
	}{
		{"metadata.labels", md.Labels},
		{"spec.template.metadata.labels", md.TemplateLabels},
		{"spec.template.spec.metadata.labels", md.TemplateSpecMetaLabels},
		{"spec.template.spec.labels", md.TemplateSpecLabels},
	}
	for _, m := range maps {
		for _, key := range controlPlaneLabels {
			if _, ok := m.labels[key]; ok {
				return fmt.Sprintf("label %s in %s", key, m.path)
			}
		}
	}
	name := strings.ToLower(md.Name)
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

// AutoscalerKey returns the first cluster-autoscaler annotation key present
// in annotations, in a fixed order, or "" when the autoscaler does not own
// the MachineDeployment (CONTRACT §4.3).
func AutoscalerKey(annotations map[string]string) string {
	for _, key := range autoscalerAnnotations {
		if _, ok := annotations[key]; ok {
			return key
		}
	}
	return ""
}

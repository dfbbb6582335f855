package guard

import "slices"

// ControlPlaneLabelKeys returns the label keys that mark control plane, so
// a reader can select control-plane Nodes by each of them.
func ControlPlaneLabelKeys() []string { return slices.Clone(controlPlaneLabels) }

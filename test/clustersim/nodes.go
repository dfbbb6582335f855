package clustersim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// defaultServerType is the server type of a pool that names none.
const defaultServerType = "cpx31"

// capacityOf knows a few Hetzner server types (vCPUs, GiB of memory);
// anything else looks like the smallest shared one.
func capacityOf(serverType string) corev1.ResourceList {
	sizes := map[string][2]int64{
		"cx22": {2, 4}, "cx32": {4, 8}, "cx42": {8, 16}, "cx52": {16, 32},
		"cpx11": {2, 2}, "cpx21": {3, 4}, "cpx31": {4, 8}, "cpx41": {8, 16}, "cpx51": {16, 32},
		"ccx13": {2, 8}, "ccx23": {4, 16}, "ccx33": {8, 32},
	}
	size, ok := sizes[serverType]
	if !ok {
		size = sizes["cx22"]
	}
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(size[0], resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(size[1]<<30, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
}

package health

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/wire"
)

// Component status values on the wire.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
)

// Component names on the wire.
const (
	APIServer         = "apiserver"
	Etcd              = "etcd"
	Scheduler         = "scheduler"
	ControllerManager = "controller-manager"
)

// staticPodComponents maps the "component" label kubeadm-style static pods
// carry to the component name on the wire.
var staticPodComponents = map[string]string{
	"kube-scheduler":          Scheduler,
	"kube-controller-manager": ControllerManager,
}

// controlPlaneSelector asks the apiserver for the scheduler and
// controller-manager static pods only.
const controlPlaneSelector = "component in (kube-scheduler,kube-controller-manager)"

// Pod is everything the health view reads from a control-plane static pod.
type Pod struct {
	Namespace string
	Name      string
	Component string // the "component" label
	Phase     string
	Ready     bool // condition Ready is True
}

// GetObjectMeta implements metav1.ObjectMetaAccessor, so the informer can key
// the record without a full ObjectMeta.
func (p *Pod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}
}

// PodFrom compacts a Pod.
func PodFrom(p *kubeapi.Pod) *Pod {
	rec := &Pod{Namespace: p.Namespace, Name: p.Name, Component: p.Labels["component"], Phase: p.Status.Phase}
	for _, c := range p.Status.Conditions {
		if c.Type == kubeapi.PodReady {
			rec.Ready = c.Status == kubeapi.ConditionTrue
		}
	}
	return rec
}

// podTransform compacts the control-plane static pods.
var podTransform = informer.Transform("control-plane pod", PodFrom)

// ControlPlane decides each component's status from what was observed.
// readyz nil means the probe failed: apiserver and etcd are then omitted, as
// is etcd when the apiserver runs no etcd check. A static-pod component is
// Healthy with at least one Running and Ready pod, Unhealthy with pods but
// none ready, and omitted without pods (managed control planes hide them).
// The result is sorted by name; nil when nothing is known.
func ControlPlane(readyz *Readyz, pods []*Pod) []wire.Component {
	var out []wire.Component
	if readyz != nil {
		out = append(out, wire.Component{Name: APIServer, Status: status(readyz.Passed)})
		if ok, found := readyz.Checks["etcd"]; found {
			out = append(out, wire.Component{Name: Etcd, Status: status(ok)})
		}
	}
	seen := map[string]bool{} // component name → has a Running and Ready pod
	for _, p := range pods {
		name, ok := staticPodComponents[p.Component]
		if !ok {
			continue
		}
		seen[name] = seen[name] || (p.Phase == kubeapi.PodRunning && p.Ready)
	}
	for name, ready := range seen {
		out = append(out, wire.Component{Name: name, Status: status(ready)})
	}
	slices.SortFunc(out, func(a, b wire.Component) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func status(ok bool) string {
	if ok {
		return Healthy
	}
	return Unhealthy
}

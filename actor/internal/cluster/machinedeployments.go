package cluster

import (
	"context"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/actor/internal/upgrade"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/machinepool"
)

// MachineDeploymentGVR is machine-controller's MachineDeployment; the group
// is the legacy cluster.k8s.io, not cluster.x-k8s.io.
var MachineDeploymentGVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}

// MachineDeployment is what the decisions read from one MachineDeployment.
type MachineDeployment struct {
	Namespace, Name, ResourceVersion string
	UID                              types.UID
	Replicas                         *int64
	Labels, Annotations              map[string]string
	// The three template label maps the control-plane heuristic reads.
	TemplateLabels, TemplateSpecMetaLabels, TemplateSpecLabels map[string]string
	// Selector claims Machines for the pool; nil when absent, empty or
	// unparsable (docs/contract.md#machine-pools).
	Selector labels.Selector
	// Kubelet is spec.template.spec.versions.kubelet, "" when absent.
	Kubelet string
	Rollout upgrade.Rollout // spec.strategy
}

// GetObjectMeta implements metav1.ObjectMetaAccessor for the informer's key.
func (r *MachineDeployment) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}
}

func (r *MachineDeployment) name() string { return r.Name }

// MachineDeployments is the MachineDeployments of one namespace, cached on
// demand. Get confirms the final decisions that write nothing ("no
// MachineDeployment", "already at N"), because the cache may lag.
type MachineDeployments struct {
	byName[*unstructured.Unstructured, *MachineDeployment]
}

// Options are what the caches can do without; the three take the same.
type Options struct {
	// Served, when not nil, is asked before a machine-controller kind's
	// informer starts, so an absent CRD is named rather than retried.
	// Nodes are always served and never ask.
	Served kubeapi.ServedFunc
	Log    *slog.Logger // nil discards
}

// NewMachineDeployments builds a stopped cache.
func NewMachineDeployments(dyn dynamic.Interface, namespace string, opts Options) *MachineDeployments {
	ri := dyn.Resource(MachineDeploymentGVR).Namespace(namespace)
	return &MachineDeployments{byName[*unstructured.Unstructured, *MachineDeployment]{
		onDemand:  inNamespace(dyn, ri, MachineDeploymentGVR, "MachineDeployment", namespace, machineDeploymentFrom, opts),
		namespace: namespace,
		get: func(ctx context.Context, name string) (*unstructured.Unstructured, error) {
			return ri.Get(ctx, name, metav1.GetOptions{})
		},
	}}
}

// inNamespace is the informer of one machine-controller kind in one
// namespace, read through the dynamic client.
func inNamespace[R any](dyn dynamic.Interface, ri dynamic.ResourceInterface,
	gvr schema.GroupVersionResource, kind, namespace string, compact func(*unstructured.Unstructured) R,
	opts Options) onDemand[*unstructured.Unstructured, R] {
	var ask func(context.Context) error
	if served := opts.Served; served != nil {
		ask = func(ctx context.Context) error { return served(ctx, gvr) }
	}
	return onDemand[*unstructured.Unstructured, R]{
		kind: kind, what: kind + "s in " + namespace, served: ask,
		list:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ri.Watch(ctx, o) },
		// The fake dynamic client of the unit tests cannot stream a
		// watch list; the real client streams as before.
		watchList: dyn, object: &unstructured.Unstructured{}, compact: compact,
		log: logger(opts.Log),
	}
}

func machineDeploymentFrom(u *unstructured.Unstructured) *MachineDeployment {
	r := &MachineDeployment{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
	}
	// A count machine-controller could not read, or a negative one, is
	// unknown: never rounded into one the scaler would compare against.
	if n, ok := machinepool.Int32(u.Object, "spec", "replicas"); ok && n >= 0 {
		r.Replicas = &n
	}
	r.Selector = machinepool.Selector(u.Object)
	r.Kubelet, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "versions", "kubelet")
	r.TemplateLabels = labelKeys(u.Object, "spec", "template", "metadata", "labels")
	r.TemplateSpecMetaLabels = labelKeys(u.Object, "spec", "template", "spec", "metadata", "labels")
	r.TemplateSpecLabels = labelKeys(u.Object, "spec", "template", "spec", "labels")
	r.Rollout = rolloutFrom(u.Object)
	return r
}

// rolloutFrom reads spec.strategy. One that does not convert is marked
// unreadable rather than dropped: read as absent, it would take
// machine-controller's defaults, which may take down fewer Machines than
// what is really there.
func rolloutFrom(obj map[string]any) upgrade.Rollout {
	raw, _, _ := unstructured.NestedFieldNoCopy(obj, "spec", "strategy")
	if raw == nil {
		return upgrade.Rollout{}
	}
	fields, ok := raw.(map[string]any)
	if !ok {
		return upgrade.Rollout{Unreadable: true}
	}
	var st struct {
		Type          string `json:"type"`
		RollingUpdate *struct {
			MaxSurge       *intstr.IntOrString `json:"maxSurge"`
			MaxUnavailable *intstr.IntOrString `json:"maxUnavailable"`
		} `json:"rollingUpdate"`
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(fields, &st); err != nil {
		return upgrade.Rollout{Unreadable: true}
	}
	r := upgrade.Rollout{Type: st.Type}
	if st.RollingUpdate != nil {
		r.MaxSurge, r.MaxUnavailable = st.RollingUpdate.MaxSurge, st.RollingUpdate.MaxUnavailable
	}
	return r
}

// labelKeys reads a label map keeping every key even when a value is not a
// string: the control-plane check looks at keys, and a map that fails to
// read as strings must not hide a control-plane key (fail closed).
func labelKeys(obj map[string]any, path ...string) map[string]string {
	m, ok, _ := unstructured.NestedMap(obj, path...)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

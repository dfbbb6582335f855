// Package cluster caches what the actor's decisions read: the
// MachineDeployments and Machines of the MD namespace and the cluster's
// Nodes. Each informer keeps compact records, not whole objects, and runs
// only while a capability that needs it is authorized: with every capability
// off the actor makes no request to the machine-controller APIs at all.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/machinepool"

	"kubehz.dev/agent/shared/informer"
)

// GVR is machine-controller's MachineDeployment; the group is the legacy
// cluster.k8s.io, not cluster.x-k8s.io.
var GVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}

// Record is what the decisions read from one MachineDeployment.
type Record struct {
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
}

// GetObjectMeta implements metav1.ObjectMetaAccessor for the informer's key.
func (r *Record) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.Namespace, Name: r.Name}
}

// Cache is the MachineDeployments of one namespace, cached on demand.
type Cache struct {
	onDemand
	dyn       dynamic.Interface
	namespace string
}

// New builds a stopped cache. served, when not nil, is asked before the
// informer starts.
func New(dyn dynamic.Interface, served kubeapi.ServedFunc, namespace string, log *slog.Logger) *Cache {
	ri := dyn.Resource(GVR).Namespace(namespace)
	return &Cache{dyn: dyn, namespace: namespace, onDemand: onDemand{
		what:   "MachineDeployments in " + namespace,
		served: bind(served, GVR),
		list:   func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		watch:  func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ri.Watch(ctx, o) },
		// The fake dynamic client of the unit tests cannot stream a
		// watch list; the real client streams as before.
		watchList: dyn, object: &unstructured.Unstructured{}, transform: transform,
		log: log,
	}}
}

// bind fixes the resource served asks about; nil stays nil.
func bind(served kubeapi.ServedFunc, gvr schema.GroupVersionResource) func(context.Context) error {
	if served == nil {
		return nil
	}
	return func(ctx context.Context) error { return served(ctx, gvr) }
}

// List returns the records by name; nil when the cache is stopped.
func (c *Cache) List() map[string]*Record {
	recs := records[*Record](&c.onDemand)
	if recs == nil {
		return nil
	}
	out := make(map[string]*Record, len(recs))
	for _, r := range recs {
		out[r.Name] = r
	}
	return out
}

// Get reads one MachineDeployment straight from the apiserver, a consistent
// read: final decisions that write nothing ("no MachineDeployment",
// "already at N") are confirmed against it, because the cache may lag.
// A missing MachineDeployment is (nil, nil).
func (c *Cache) Get(ctx context.Context, name string) (*Record, error) {
	rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	u, err := c.dyn.Resource(GVR).Namespace(c.namespace).Get(rctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get MachineDeployment %s/%s: %w", c.namespace, name, err)
	}
	return recordFrom(u), nil
}

var transform = informer.Transform("machinedeployment", recordFrom)

func recordFrom(u *unstructured.Unstructured) *Record {
	r := &Record{
		Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion(), UID: u.GetUID(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations(),
	}
	// spec.replicas is read tolerantly: JSON numbers may arrive as int64 or
	// float64; anything else counts as unknown.
	if v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); ok {
		switch n := v.(type) {
		case int64:
			r.Replicas = &n
		case float64:
			i := int64(n)
			r.Replicas = &i
		}
	}
	r.Selector = machinepool.Selector(u.Object)
	r.Kubelet, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "versions", "kubelet")
	r.TemplateLabels = labelKeys(u.Object, "spec", "template", "metadata", "labels")
	r.TemplateSpecMetaLabels = labelKeys(u.Object, "spec", "template", "spec", "metadata", "labels")
	r.TemplateSpecLabels = labelKeys(u.Object, "spec", "template", "spec", "labels")
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

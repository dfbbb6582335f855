package actions

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/report"
)

// reportRecord is the ConfigMap as cached: the decoded, validated document
// and what decoding found wrong, never the raw data.
type reportRecord struct {
	namespace, name string
	doc             report.Document
	problems        []report.Problem
}

func (r *reportRecord) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.namespace, Name: r.name}
}

// leaseRecord is the Lease as cached: holder, renewal and duration only.
type leaseRecord struct {
	namespace, name string
	lease           Lease
}

func (r *leaseRecord) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: r.namespace, Name: r.name}
}

// reportTransform decodes on the way in, so the informer never holds the
// ConfigMap. Only our name is decoded: the apiserver's field selector already
// ensures that, and a fake clientset (which ignores selectors) must not make
// tests decode strangers. A record passed in again is returned as is.
func reportTransform(obj any) (any, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return obj, nil
	}
	r := &reportRecord{namespace: cm.Namespace, name: cm.Name}
	if data, has := cm.Data[report.Key]; has && cm.Name == report.ConfigMapName {
		r.doc, r.problems = report.Decode(data)
	}
	return r, nil
}

func leaseTransform(obj any) (any, error) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		return obj, nil
	}
	r := &leaseRecord{namespace: l.Namespace, name: l.Name}
	if h := l.Spec.HolderIdentity; h != nil {
		r.lease.Holder = *h
	}
	if t := l.Spec.RenewTime; t != nil {
		r.lease.RenewTime = t.Time
	}
	if s := l.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		r.lease.Duration = time.Duration(*s) * time.Second
	}
	return r, nil
}

// byName lists and watches the one object called name. The RBAC grants get,
// list and watch on that name only, which a list or watch satisfies through
// the metadata.name field selector.
func byName[L runtime.Object](client kubernetes.Interface, name string,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) cache.ListerWatcher {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			l, err := list(ctx, o)
			return l, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return watchFn(ctx, o)
		},
	}, client)
}

package actions

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
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
// ConfigMap. Only the named one is decoded: the apiserver's field selector
// already ensures that, and a fake clientset (which ignores selectors) must
// not make tests decode strangers. A record passed in again is returned as is.
func reportTransform(name string) func(obj any) (any, error) {
	return func(obj any) (any, error) {
		cm, ok := obj.(*kubeapi.ConfigMap)
		if !ok {
			return obj, nil
		}
		r := &reportRecord{namespace: cm.Namespace, name: cm.Name}
		if data, has := cm.Data[report.Key]; has && cm.Name == name {
			r.doc, r.problems = report.Decode(data)
		}
		return r, nil
	}
}

func leaseTransform(obj any) (any, error) {
	l, ok := obj.(*kubeapi.Lease)
	if !ok {
		return obj, nil
	}
	r := &leaseRecord{namespace: l.Namespace, name: l.Name}
	if h := l.Spec.HolderIdentity; h != nil {
		// Kept, shown and logged only as far as the report's holder is.
		r.lease.Holder = wire.Clamp(*h, wire.MaxNameLen)
	}
	if t := l.Spec.RenewTime; t != nil {
		r.lease.RenewTime = t.Time
	}
	if s := l.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		r.lease.Duration = time.Duration(*s) * time.Second
	}
	return r, nil
}

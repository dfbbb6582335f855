package kubeapi

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Reader lists and watches one kind of object: a Resource, or in unit tests
// a fake typed client served through kubeapitest.
type Reader[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Getter reads one object by name: a Resource, or kubeapitest.Getter.
type Getter[T runtime.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// +k8s:deepcopy-gen=false

// Selectors narrow what a ListWatch sees, on the apiserver.
type Selectors struct {
	Field, Label string
}

// ListWatch feeds an informer from r with sel applied to every list and
// watch. The informer streams its initial list over the watch where the
// apiserver supports it (client-go's WatchListClient, on by default), so the
// apiserver never builds the whole list in memory at once.
//
// Fake typed clients cannot stream a list: kubeapitest's readers tell
// client-go so, and informers on them list first.
func ListWatch[L runtime.Object](r Reader[L], sel Selectors) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector, o.LabelSelector = sel.Field, sel.Label
			return r.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector, o.LabelSelector = sel.Field, sel.Label
			return r.Watch(ctx, o)
		},
	}, r)
}

// Named selects the one object called name. RBAC that grants list and watch
// by resourceName admits only requests carrying this selector.
func Named(name string) Selectors {
	return Selectors{Field: fields.OneTermEqualSelector("metadata.name", name).String()}
}

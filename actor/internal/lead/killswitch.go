package lead

import (
	"context"
	"log/slog"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// KillSwitch watches the actor's own Deployment, whose deletion is the kill
// switch: the moment it is gone or marked for deletion, Tripped closes,
// without waiting for the kubelet to kill this pod.
type KillSwitch struct {
	tripped chan struct{}
	once    sync.Once
	ctrl    cache.Controller
	store   cache.Store
	log     *slog.Logger
	name    string
}

// KillSwitchOptions are what a KillSwitch can do without.
type KillSwitchOptions struct {
	Log *slog.Logger // nil discards
}

// NewKillSwitch watches namespace/name; the RBAC grants get, list and
// watch on that one Deployment.
func NewKillSwitch(client kubernetes.Interface, namespace, name string, opts KillSwitchOptions) *KillSwitch {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	k := &KillSwitch{tripped: make(chan struct{}), log: log, name: name}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	deps := client.AppsV1().Deployments(namespace)
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return deps.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return deps.Watch(ctx, o)
		},
	}, client)
	k.store, k.ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &appsv1.Deployment{},
		// Only whether it is being deleted matters.
		Transform: func(obj any) (any, error) {
			if d, ok := obj.(*appsv1.Deployment); ok {
				return &deploymentRecord{namespace: d.Namespace, name: d.Name, deleting: d.DeletionTimestamp != nil}, nil
			}
			return obj, nil
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { k.check() },
			UpdateFunc: func(any, any) { k.check() },
			DeleteFunc: func(any) { k.check() },
		},
	})
	return k
}

// Run watches until ctx is done. After the first list it trips at once if
// the Deployment does not exist: an actor without its Deployment never acts.
func (k *KillSwitch) Run(ctx context.Context, synced chan<- struct{}) {
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), k.ctrl.HasSynced) {
			k.check()
			close(synced)
		}
	}()
	k.ctrl.RunWithContext(ctx)
}

// Tripped closes when acting must stop for good.
func (k *KillSwitch) Tripped() <-chan struct{} { return k.tripped }

func (k *KillSwitch) check() {
	if !k.ctrl.HasSynced() {
		return
	}
	alive := false
	for _, obj := range k.store.List() {
		// The watch's field selector names the one Deployment; the check
		// does too, so a lister that served more could not keep it open.
		if d, ok := obj.(*deploymentRecord); ok && d.name == k.name && !d.deleting {
			alive = true
		}
	}
	if !alive {
		k.once.Do(func() {
			k.log.Warn("Own Deployment deleted or deleting: kill switch tripped", "deployment", k.name)
			close(k.tripped)
		})
	}
}

type deploymentRecord struct {
	namespace, name string
	deleting        bool
}

func (d *deploymentRecord) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: d.namespace, Name: d.name}
}

package clustersim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Start runs Run in the background until stop, which waits for it to end.
// Its error is dropped: the tests and the demo that use it check the agent,
// not the simulator's own end.
func (s *Sim) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Run(ctx)
	}()
	return func() { cancel(); <-done }
}

// Run reconciles until ctx is done, then stops its informers, waits for
// them and returns nil. Watches on MachineDeployments, MachineSets,
// Machines, Nodes and bound Pods wake it at once; a resync tick every
// 250 ms catches joins that have come due. Each pass reads fresh Lists, so
// a write the simulator just made is never missed by a lagging cache.
func (s *Sim) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan struct{}, 1)
	signal := func(any) {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	}
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.dyn, 0, s.opts.Namespace, nil)
	nodeFactory := informers.NewSharedInformerFactory(s.kube, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(s.kube, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = boundPods }))
	// Deferred in this order so the informers are told to stop before
	// Shutdown waits for them.
	defer podFactory.Shutdown()
	defer nodeFactory.Shutdown()
	defer dynFactory.Shutdown()
	defer cancel()
	watched := []cache.SharedIndexInformer{nodeFactory.Core().V1().Nodes().Informer(), podFactory.Core().V1().Pods().Informer()}
	for _, gvr := range []schema.GroupVersionResource{MachineDeploymentsGVR, MachineSetsGVR, MachinesGVR} {
		watched = append(watched, dynFactory.ForResource(gvr).Informer())
	}
	for _, inf := range watched {
		// The caches only wake the loop; keeping each object's key is enough.
		if err := inf.SetTransform(keyOnly); err != nil {
			return fmt.Errorf("informer transform: %w", err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("informer handler: %w", err)
		}
	}
	dynFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	podFactory.Start(ctx.Done())

	ticker := time.NewTicker(resync)
	defer ticker.Stop()
	var lastErr string
	for {
		err := s.reconcile(ctx)
		if ctx.Err() != nil {
			return nil
		}
		// A failing apiserver would repeat the same error every tick;
		// say it once, and once more when it changes or clears.
		if msg := errText(err); msg != lastErr {
			if err != nil {
				s.log.Warn("Reconcile pass failed", "err", err)
			} else {
				s.log.Info("Reconcile pass recovered")
			}
			lastErr = msg
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-wake:
		}
	}
}

// keyOnly shrinks a cached object to the metadata its key needs.
func keyOnly(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil // a deletion tombstone; pass it through
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: m.GetName(), Namespace: m.GetNamespace(), ResourceVersion: m.GetResourceVersion(),
	}}, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// world is one consistent-enough read of everything a pass decides on.
type world struct {
	now      time.Time
	mds      []*unstructured.Unstructured // sorted by name
	sets     map[string]*unstructured.Unstructured
	machines []*unstructured.Unstructured
	nodes    map[string]*corev1.Node
	pods     map[string][]*corev1.Pod // bound pods by node
}

func (s *Sim) observe(ctx context.Context) (*world, error) {
	ns, now := s.opts.Namespace, time.Now()
	mds, err := s.dyn.Resource(MachineDeploymentsGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list MachineDeployments in %s: %w", ns, err)
	}
	sets, err := s.dyn.Resource(MachineSetsGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list MachineSets in %s: %w", ns, err)
	}
	machines, err := s.dyn.Resource(MachinesGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Machines in %s: %w", ns, err)
	}
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	pods, err := s.listBoundPods(ctx)
	if err != nil {
		return nil, err
	}
	w := &world{now: now, sets: map[string]*unstructured.Unstructured{}, nodes: map[string]*corev1.Node{}, pods: pods}
	for i := range mds.Items {
		w.mds = append(w.mds, &mds.Items[i])
	}
	sort.Slice(w.mds, func(i, j int) bool { return w.mds[i].GetName() < w.mds[j].GetName() })
	for i := range sets.Items {
		w.sets[sets.Items[i].GetName()] = &sets.Items[i]
	}
	for i := range machines.Items {
		w.machines = append(w.machines, &machines.Items[i])
	}
	for i := range nodes.Items {
		w.nodes[nodes.Items[i].Name] = &nodes.Items[i]
	}
	return w, nil
}

// reconcile is one bounded pass over every pool, every pod deleting on a
// Ready Node, and every deleting Machine.
func (s *Sim) reconcile(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, passTimeout)
	defer cancel()
	w, err := s.observe(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, md := range w.mds {
		if err := s.syncPool(ctx, w, md); err != nil {
			errs = append(errs, fmt.Errorf("pool %s/%s: %w", md.GetNamespace(), md.GetName(), err))
		}
	}
	errs = append(errs, s.confirmDeletions(ctx, w), s.finalizeDeleting(ctx, w))
	live := map[types.UID]bool{}
	for _, m := range w.machines {
		live[m.GetUID()] = true
	}
	s.forgetExcept(live, w.now)
	return errors.Join(errs...)
}

// quiet drops the errors a later pass resolves by itself: a conflict from a
// stale read, or an object another writer created or removed first.
func quiet(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

package clustersim

import (
	"context"
	"errors"
	"fmt"
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

// Run simulates until ctx is done, then stops its informers, waits for
// them and returns nil. Watches on MachineDeployments, Machines, Nodes and
// bound Pods wake it at once; a tick every resync (1 s) catches servers the
// cloud created or deleted and Leases that are due. Each pass reads fresh
// Lists, so a write the simulator just made is never missed by a lagging
// cache.
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
	for _, gvr := range []schema.GroupVersionResource{MachineDeploymentsGVR, MachinesGVR} {
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
		err := s.pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		// A failing apiserver would repeat the same error every tick;
		// say it once, and once more when it changes or clears.
		if msg := errText(err); msg != lastErr {
			if err != nil {
				s.log.Warn("Simulation pass failed", "err", err)
			} else {
				s.log.Info("Simulation pass recovered")
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
	servers  map[string]server
	mds      []*unstructured.Unstructured
	machines map[string]*unstructured.Unstructured // by UID
	nodes    map[string]*corev1.Node
	pods     map[string][]*corev1.Pod // bound pods by node
	secrets  map[string]string        // bootstrap Secret name → its revision
}

func (s *Sim) observe(ctx context.Context) (*world, error) {
	ns := s.opts.Namespace
	w := &world{now: time.Now(), machines: map[string]*unstructured.Unstructured{}, nodes: map[string]*corev1.Node{}, secrets: map[string]string{}}
	var err error
	if w.servers, err = s.servers(); err != nil {
		return nil, err
	}
	mds, err := s.dyn.Resource(MachineDeploymentsGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list MachineDeployments in %s: %w", ns, err)
	}
	for i := range mds.Items {
		w.mds = append(w.mds, &mds.Items[i])
	}
	machines, err := s.dyn.Resource(MachinesGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Machines in %s: %w", ns, err)
	}
	for i := range machines.Items {
		w.machines[string(machines.Items[i].GetUID())] = &machines.Items[i]
	}
	nodes, err := s.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	for i := range nodes.Items {
		w.nodes[nodes.Items[i].Name] = &nodes.Items[i]
	}
	secrets, err := s.kube.CoreV1().Secrets(cloudInitNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list bootstrap Secrets: %w", err)
	}
	for _, sec := range secrets.Items {
		w.secrets[sec.Name] = sec.Annotations[secretRevision]
	}
	if w.pods, err = s.listBoundPods(ctx); err != nil {
		return nil, err
	}
	return w, nil
}

// pass is one bounded round: the bootstrap Secrets, a beat of every
// kubelet, and the pod deletions the live ones confirm.
func (s *Sim) pass(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, passTimeout)
	defer cancel()
	if err := s.ensureCloudInitNamespace(ctx); err != nil {
		return err
	}
	w, err := s.observe(ctx)
	if err != nil {
		return err
	}
	errs := []error{s.writeBootstrapSecrets(ctx, w)}
	live, err := s.stepKubelets(ctx, w)
	errs = append(errs, err, s.confirmDeletions(ctx, w, live))
	return errors.Join(errs...)
}

// stepKubelets boots a kubelet for every new server, forgets those whose
// server is gone, and runs one beat of each. It returns the Nodes whose
// kubelet is alive and reports Ready.
func (s *Sim) stepKubelets(ctx context.Context, w *world) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, k := range s.kubelets {
		if _, ok := w.servers[string(uid)]; !ok && !k.static {
			s.log.Info("Server gone; its kubelet ends", "node", k.node(), "machine", k.srv.Namespace+"/"+k.srv.Machine)
			delete(s.kubelets, uid)
		}
	}
	for uid, srv := range w.servers {
		if _, ok := s.kubelets[types.UID(uid)]; !ok {
			s.kubelets[types.UID(uid)] = &kubelet{srv: srv, seen: w.now, ready: corev1.ConditionTrue}
		}
	}
	var errs []error
	live := map[string]bool{}
	for _, k := range s.kubelets {
		if err := s.stepKubelet(ctx, w, k); err != nil {
			errs = append(errs, err)
		}
		if k.registered && !k.stopped && k.ready == corev1.ConditionTrue {
			live[k.node()] = true
		}
	}
	return live, errors.Join(errs...)
}

// quiet drops the errors a later pass resolves by itself: a conflict from a
// stale read, or an object another writer created or removed first.
func quiet(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Package clustersim plays machine-controller and the kubelets against a real
// kube-apiserver, for the tests and the demo. For every MachineDeployment in
// one namespace it keeps a MachineSet and spec.replicas Machines, joins a
// Ready Node for each Machine after a delay, drains and removes the Node
// when its Machine is deleted, and keeps the MachineDeployment's status
// counts current. When the template's kubelet changes it rolls the Machines
// one at a time, surging one new Machine before deleting an old one
// (maxSurge 1, maxUnavailable 0). Tests can make creates fail, hold joins,
// stall deletions, place pods, and turn nodes NotReady or Unknown.
//
// Pods are only those a test placed. On a Ready Node the simulator confirms
// a pod's graceful deletion as its kubelet would; on any other nothing
// does, so the pod stays Terminating and a drain waits on it, as in a real
// cluster with a dead node. Only the kubelet version triggers a roll: other
// template changes reach new Machines only. No garbage collector runs in a
// bare control plane, so deleting a MachineDeployment leaves its MachineSet
// and Machines behind.
package clustersim

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	// PoolLabel selects a pool's Machines and is put on their Nodes.
	PoolLabel = "kubehz.dev/pool"
	// Finalizer holds a deleting Machine until its Node is gone.
	Finalizer = "clustersim.kubehz.dev/node"
	// InstanceTypeLabel is the well-known Node label for the server type.
	InstanceTypeLabel = "node.kubernetes.io/instance-type"

	apiVersion = "cluster.k8s.io/v1alpha1"

	defaultNamespace = "kube-system"
	defaultJoinDelay = time.Second
	defaultKubelet   = "v1.35.5"

	// resync is how often a pass runs without any watch event, so joins
	// due after JoinDelay happen at most this late.
	resync = 250 * time.Millisecond
	// passTimeout bounds one reconcile pass, every API call included.
	passTimeout = 15 * time.Second
	// maxChangesPerPass bounds the Machines one pool creates or deletes
	// in a pass; a huge spec.replicas converges over several passes.
	maxChangesPerPass = 20
)

// machine-controller's resources, which the simulator plays and the tests
// read and write beside it.
var (
	MachineDeploymentsGVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	MachineSetsGVR        = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinesets"}
	MachinesGVR           = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

// Options tune a simulator. Zero values take the defaults.
type Options struct {
	Namespace string        // the MachineDeployments' namespace; default kube-system
	JoinDelay time.Duration // a Node joins this long after its Machine is created; default 1s
	Kubelet   string        // kubelet version when a template names none; default v1.35.5
	Log       *slog.Logger  // default discards
}

// Sim is one simulated machine-controller and its kubelets. Run it once at a
// time; the knobs and queries are safe to call from any goroutine.
type Sim struct {
	opts Options
	dyn  dynamic.Interface
	kube kubernetes.Interface
	log  *slog.Logger

	mu       sync.Mutex
	failing  map[string]failure // pool → the error new Machines get
	stalled  map[string]bool    // pools whose deletions are held
	held     map[string]bool    // pools whose new Machines do not join
	machines map[types.UID]birth
}

// failure is a terminal error a failed create writes into Machine status.
type failure struct{ reason, message string }

// birth is what the simulator remembers about a Machine it created: when,
// to the nanosecond (creationTimestamp has whole seconds only), and the
// failure it was created under, if any.
type birth struct {
	at   time.Time
	fail *failure
}

// New builds a simulator talking to the apiserver in cfg.
func New(cfg *rest.Config, opts Options) (*Sim, error) {
	if opts.Namespace == "" {
		opts.Namespace = defaultNamespace
	}
	if opts.JoinDelay <= 0 {
		opts.JoinDelay = defaultJoinDelay
	}
	if opts.Kubelet == "" {
		opts.Kubelet = defaultKubelet
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	cfg = rest.CopyConfig(cfg)
	// A pass makes a handful of calls; client-go's default 5 QPS would
	// turn a scale-up into seconds of client-side throttling.
	cfg.QPS, cfg.Burst = 200, 400
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("clientset: %w", err)
	}
	return &Sim{
		opts: opts, dyn: dyn, kube: kube, log: opts.Log,
		failing:  map[string]failure{},
		stalled:  map[string]bool{},
		held:     map[string]bool{},
		machines: map[types.UID]birth{},
	}, nil
}

func (s *Sim) remember(uid types.UID, b birth) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.machines[uid] = b
}

func (s *Sim) recall(uid types.UID) (birth, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.machines[uid]
	return b, ok
}

// forgetExcept drops what the simulator remembers about Machines that no
// longer exist, so the memory stays bounded by the live Machines. live was
// read at observed; a Machine created since is not in it yet and is kept.
func (s *Sim) forgetExcept(live map[types.UID]bool, observed time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid, b := range s.machines {
		if !live[uid] && b.at.Before(observed) {
			delete(s.machines, uid)
		}
	}
}

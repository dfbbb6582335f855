// Package clustersim plays, for the tests and the demo, what no real
// component can on this machine: the cloud's servers and the kubelets on
// them. Everything else is real: kubermatic machine-controller keeps each
// MachineDeployment's MachineSets and Machines, rolls and drains them, and
// creates and deletes servers through the simulated cloud built into it
// (test/tools/machine-controller/simcloud.patch: one file per server in
// Options.CloudDir); kube-controller-manager marks silent Nodes Unknown,
// taints them and evicts their pods (see kube.StartControllers).
//
// For each server in the cloud directory the simulator boots a kubelet
// JoinDelay after it first sees the server: the kubelet registers its Node
// as a real one does (labels, the Machine's spec labels, providerID,
// addresses, capacity, nodeInfo with the Machine's kubelet version), renews
// the Node's Lease, reports Ready, and confirms the graceful deletion of
// pods on its Node. When the server is deleted, its kubelet ends. The
// simulator also plays operating-system-manager's one part the controller
// waits on: a bootstrap Secret per MachineDeployment revision.
//
// The simulator never creates, updates or deletes MachineDeployments,
// MachineSets or Machines: it acts as its own user (SimulatorUser), and a
// test checks the audit log for it. CreatePool is the one exception by
// design: it is the test, as the cluster's admin, creating a pool.
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
	// PoolLabel selects a pool's Machines; CreatePool also puts it in the
	// Machines' spec labels, so it reaches their Nodes.
	PoolLabel = "kubehz.dev/pool"
	// InstanceTypeLabel is the well-known Node label for the server type.
	InstanceTypeLabel = "node.kubernetes.io/instance-type"
	// SimulatorUser is who the simulator acts as, in the audit log as the
	// user the test's admin impersonates.
	SimulatorUser = "kubehz-test:clustersim"

	apiVersion = "cluster.k8s.io/v1alpha1"

	defaultNamespace = "kube-system"
	defaultJoinDelay = time.Second
	defaultKubelet   = "v1.35.5"

	// resync is how often a pass runs without any watch event: what no
	// watch reports (a server the simulated cloud created, a join delay
	// run out, a Lease due) waits at most this long. Every pass lists the
	// pools, Machines, Nodes and pods, so a shorter one costs the apiserver
	// and the race-instrumented test binary CPU for the whole suite.
	resync = time.Second
	// passTimeout bounds one pass, every API call included.
	passTimeout = 15 * time.Second
	// leaseRenewal is how often a live kubelet renews its Node's Lease:
	// well inside kube-controller-manager's grace period (20 s here).
	leaseRenewal = 2 * time.Second
	// leaseDuration is the Lease's stated duration, a kubelet's default.
	leaseDuration = 40
)

// machine-controller's resources.
var (
	MachineDeploymentsGVR = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"}
	MachineSetsGVR        = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinesets"}
	MachinesGVR           = schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
)

// Options tune a simulator. Zero values take the defaults.
type Options struct {
	CloudDir  string        // the simulated cloud's server directory, shared with machine-controller; required
	Namespace string        // the MachineDeployments' namespace; default kube-system
	JoinDelay time.Duration // a server's kubelet registers this long after the server appears; default 1s
	Kubelet   string        // kubelet version when CreatePool is given none; default v1.35.5
	Log       *slog.Logger  // default discards
}

// Sim is one simulated cloud's kubelets. Run it once at a time; the knobs
// and queries are safe to call from any goroutine.
type Sim struct {
	opts Options
	// admin is the test's own client, for CreatePool alone; dyn and kube
	// act as SimulatorUser.
	admin dynamic.Interface
	dyn   dynamic.Interface
	kube  kubernetes.Interface
	log   *slog.Logger

	mu       sync.Mutex
	held     map[string]bool // pools whose servers' kubelets do not register
	kubelets map[types.UID]*kubelet
}

// New builds a simulator talking to the apiserver in cfg, whose user must
// be allowed to impersonate (the tests' admin is).
func New(cfg *rest.Config, opts Options) (*Sim, error) {
	if opts.CloudDir == "" {
		return nil, fmt.Errorf("clustersim: no cloud directory")
	}
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
	admin, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: SimulatorUser, Groups: []string{"system:masters"}}
	// A pass makes a handful of calls per kubelet; client-go's default
	// 5 QPS would delay Lease renewals past the grace period.
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
		opts: opts, admin: admin, dyn: dyn, kube: kube, log: opts.Log,
		held:     map[string]bool{},
		kubelets: map[types.UID]*kubelet{},
	}, nil
}

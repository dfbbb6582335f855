package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/actor/internal/refuse"
)

// Node is the cached record of one Node: exactly what healing decides on
// (heal.Node), a few dozen bytes of a multi-kilobyte object. It is its own
// type only to carry the informer's key; heal.Node(*n) hands it over.
type Node heal.Node

// The marks machine-controller (v1.65) puts on a Node it matched to a
// Machine: the Machine's UID as a label, and its namespace/name as the
// annotation cluster-autoscaler's cluster-api provider reads.
const (
	OwnedByLabel      = "machine-controller/owned-by"
	MachineAnnotation = "cluster.k8s.io/machine"
)

// GetObjectMeta implements metav1.ObjectMetaAccessor for the informer's key.
func (n *Node) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{Name: n.Name} }

func (n *Node) name() string { return n.Name }

// Nodes is the cluster's Nodes, cached on demand. A heal re-reads its node
// with Get just before the delete, because the cache may lag a recovery.
type Nodes struct {
	byName[*corev1.Node, *Node]
}

// NewNodes builds a stopped cache; opts.Served is not asked.
func NewNodes(client kubernetes.Interface, opts Options) *Nodes {
	api := client.CoreV1().Nodes()
	return &Nodes{byName[*corev1.Node, *Node]{
		onDemand: onDemand[*corev1.Node, *Node]{
			kind: "Node", what: "Nodes",
			list:      func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return api.List(ctx, o) },
			watch:     func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return api.Watch(ctx, o) },
			watchList: client, object: &corev1.Node{}, compact: NodeFrom,
			log: logger(opts.Log),
		},
		get: func(ctx context.Context, name string) (*corev1.Node, error) {
			return api.Get(ctx, name, metav1.GetOptions{})
		},
	}}
}

// NodeFrom compacts a Node.
func NodeFrom(n *corev1.Node) *Node {
	r := &Node{Name: n.Name, ControlPlane: refuse.ControlPlaneLabel(n.Labels) != "",
		OwnerUID: types.UID(n.Labels[OwnedByLabel]), OwnerMachine: n.Annotations[MachineAnnotation]}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			r.Ready, r.Since = string(c.Status), c.LastTransitionTime.Time
			break
		}
	}
	return r
}

// Package cluster is the observer's live view of the cluster: informers whose
// caches hold compact records, never full Node, Pod or Event objects, so the
// observer's memory follows what the heartbeat reads, not what the apiserver
// stores.
package cluster

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
)

// Node is everything the heartbeat reads from a Node, already in wire form.
type Node struct {
	Name           string
	Status         string // Ready, NotReady or Unknown
	Ready          bool
	Roles          string
	InstanceType   string
	KubeletVersion string
	CPU            string // canonical Quantity, "" when absent
	Memory         string
}

// Event is a Warning event as the heartbeat reads it. Message is kept only
// when the configuration allows notes to leave the cluster, or when the event
// is a machine-controller retry loop, whose message is the machine issue.
type Event struct {
	Namespace string
	Name      string
	Reason    string
	Kind      string // involvedObject.kind
	// InvolvedNamespace and InvolvedName are kept for Machine events only:
	// machine issues match them to Machines; nothing else reads them.
	InvolvedNamespace string
	InvolvedName      string
	Message           string
	Warning           bool // the watch asks only for Warning; the flag lets the beat check again
	Count             int32
	LastSeen          time.Time
}

// same reports whether two records hold the same; times compare as instants.
func (e *Event) same(o *Event) bool {
	a, b := *e, *o
	a.LastSeen, b.LastSeen = time.Time{}, time.Time{}
	return a == b && e.LastSeen.Equal(o.LastSeen)
}

// The informer machinery keys objects through meta.Accessor. A throwaway
// ObjectMeta carrying only the key fields satisfies it without keeping a full
// ObjectMeta (hundreds of bytes) per cached record.

// GetObjectMeta implements metav1.ObjectMetaAccessor.
func (n *Node) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{Name: n.Name} }

// GetObjectMeta implements metav1.ObjectMetaAccessor.
func (e *Event) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: e.Namespace, Name: e.Name}
}

// recordOf compacts obj through transform for a store of T records: obj may
// already be a record (a reflector's temporary store holds them) or a
// tombstone of one.
func recordOf[T any](transform cache.TransformFunc, obj any) (T, error) {
	var zero T
	out, err := transform(obj)
	if err != nil {
		return zero, err
	}
	switch o := out.(type) {
	case cache.DeletedFinalStateUnknown:
		if r, ok := o.Obj.(T); ok {
			return r, nil
		}
	case T:
		return o, nil
	}
	return zero, informer.ErrUnexpected
}

// putRecord compacts obj through transform and hands the record to put under
// mu, then signals when put says the store changed: how both reflector
// stores take an add or an update.
func putRecord[T any](mu *sync.RWMutex, transform cache.TransformFunc, obj any, put func(T) bool, signal func()) error {
	rec, err := recordOf[T](transform, obj)
	if err != nil {
		return err
	}
	mu.Lock()
	changed := put(rec)
	mu.Unlock()
	if changed {
		signal()
	}
	return nil
}

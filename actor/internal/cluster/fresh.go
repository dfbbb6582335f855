package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// freshPage is the page size of a direct List: big enough that a
// 5,000-node cluster reads in ten requests, small enough that only one page
// of whole objects is in memory at a time.
const freshPage = 500

// freshTimeout bounds one direct List, every page included.
const freshTimeout = 30 * time.Second

// fresh lists straight from the apiserver (a consistent read, not the
// informer's cache) and compacts each object as it arrives. The executor
// confirms every decision that deletes or rolls on such a read, because an
// informer whose watch is broken keeps serving its last state without
// saying so.
func fresh[R any](ctx context.Context, what string, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	compact func(runtime.Object) (R, bool)) ([]R, error) {
	ctx, cancel := context.WithTimeout(ctx, freshTimeout)
	defer cancel()
	p := pager.New(list)
	p.PageSize = freshPage
	var out []R
	err := p.EachListItemWithAlloc(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		if r, ok := compact(obj); ok {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", what, err)
	}
	return out, nil
}

// Fresh lists the MachineDeployments straight from the apiserver.
func (c *Cache) Fresh(ctx context.Context) (map[string]*Record, error) {
	recs, err := fresh(ctx, c.what, c.list, func(obj runtime.Object) (*Record, bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, false
		}
		return recordFrom(u), true
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Record, len(recs))
	for _, r := range recs {
		out[r.Name] = r
	}
	return out, nil
}

// Fresh lists the Machines straight from the apiserver.
func (c *Machines) Fresh(ctx context.Context) ([]*Machine, error) {
	return fresh(ctx, c.what, c.list, func(obj runtime.Object) (*Machine, bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, false
		}
		return machineFrom(u), true
	})
}

// Fresh lists the Nodes straight from the apiserver.
func (c *Nodes) Fresh(ctx context.Context) (map[string]*Node, error) {
	recs, err := fresh(ctx, c.what, c.list, func(obj runtime.Object) (*Node, bool) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil, false
		}
		return NodeFrom(n), true
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Node, len(recs))
	for _, n := range recs {
		out[n.Name] = n
	}
	return out, nil
}

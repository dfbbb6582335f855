package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/pager"
)

// freshPage is the page size of a direct List: big enough that a
// 5,000-node cluster reads in ten requests, small enough that only one page
// of whole objects is in memory at a time.
const freshPage = 500

// freshTimeout bounds one direct List, every page included.
const freshTimeout = 30 * time.Second

// getTimeout bounds one direct Get.
const getTimeout = 15 * time.Second

// fresh lists straight from the apiserver (a consistent read, not the
// informer's cache) and compacts each object as it arrives. The executor
// confirms every decision that deletes or rolls on such a read, because an
// informer whose watch is broken keeps serving its last state without
// saying so.
func (c *onDemand[From, R]) fresh(ctx context.Context) ([]R, error) {
	ctx, cancel := context.WithTimeout(ctx, freshTimeout)
	defer cancel()
	p := pager.New(c.list)
	p.PageSize = freshPage
	var out []R
	err := p.EachListItemWithAlloc(ctx, metav1.ListOptions{}, func(obj runtime.Object) error {
		if o, ok := obj.(From); ok {
			out = append(out, c.compact(o))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", c.what, err)
	}
	return out, nil
}

// named is a record its cache looks up by name.
type named interface{ name() string }

// byName is an on-demand cache whose records are read by name, with the
// two direct reads that confirm a decision: a List of every object, and a
// Get of one.
type byName[From runtime.Object, R named] struct {
	onDemand[From, R]
	namespace string // "" for a cluster-scoped kind
	get       func(ctx context.Context, name string) (From, error)
}

// List returns the cached records by name; nil when the cache is stopped.
func (c *byName[From, R]) List() map[string]R {
	recs := c.cached()
	if recs == nil {
		return nil
	}
	return index(recs)
}

// Fresh lists every object straight from the apiserver, by name.
func (c *byName[From, R]) Fresh(ctx context.Context) (map[string]R, error) {
	recs, err := c.fresh(ctx)
	if err != nil {
		return nil, err
	}
	return index(recs), nil
}

// Get reads one object straight from the apiserver, a consistent read. A
// missing object is the zero record (nil) and no error.
func (c *byName[From, R]) Get(ctx context.Context, name string) (R, error) {
	var none R
	rctx, cancel := context.WithTimeout(ctx, getTimeout)
	defer cancel()
	obj, err := c.get(rctx, name)
	if apierrors.IsNotFound(err) {
		return none, nil
	}
	if err != nil {
		if c.namespace != "" {
			name = c.namespace + "/" + name
		}
		return none, fmt.Errorf("get %s %s: %w", c.kind, name, err)
	}
	return c.compact(obj), nil
}

func index[R named](recs []R) map[string]R {
	out := make(map[string]R, len(recs))
	for _, r := range recs {
		out[r.name()] = r
	}
	return out
}

package cluster

import (
	"cmp"
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
)

// The store's bound holds only once a list is over. Left to the reflector,
// the initial list and every relist would hold every Warning event in the
// cluster at once: decoded, since a list from the watch cache at
// resourceVersion 0 comes whole whatever its limit, or, streamed, as records
// in the reflector's own store, which no bound reaches. Anyone the edit role
// binds can create a hundred thousand events in the hour they live, and the
// observer would be killed for memory on every restart until they expired.
// So the events' list reads a page at a time and cuts what it holds to what
// the store would keep as it goes.

const (
	// eventPageSize is how many events one page of the list asks for.
	eventPageSize = 500
	// maxEventPages ends a list at 500,000 events with what it kept by then:
	// the watch goes on from the list's snapshot, so events on the pages
	// not read reach the store only when they change.
	maxEventPages = 1000
)

// listerWatcher is the Warning events' source: r's watch as it is, and a
// list read page by page and cut to the store's bound. It opts out of
// streaming the list over the watch, which would bypass the cut.
func (s *eventStore) listerWatcher(r kubeapi.Reader[*kubeapi.EventList], sel kubeapi.Selectors) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return s.list(ctx, r, sel, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector, o.LabelSelector = sel.Field, sel.Label
			return r.Watch(ctx, o)
		},
	}, noWatchList{})
}

// noWatchList tells the reflector to list, not to stream the list.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// list reads the events a page at a time from one consistent snapshot,
// holding at most about twice the store's bound plus a page.
func (s *eventStore) list(ctx context.Context, r kubeapi.Reader[*kubeapi.EventList], sel kubeapi.Selectors,
	o metav1.ListOptions) (*kubeapi.EventList, error) {
	o.FieldSelector, o.LabelSelector = sel.Field, sel.Label
	// Paged from a consistent read: at "0" the watch cache would answer whole.
	o.ResourceVersion, o.ResourceVersionMatch, o.Limit, o.Continue = "", "", eventPageSize, ""
	out := &kubeapi.EventList{}
	for range maxEventPages {
		page, err := r.List(ctx, o)
		if err != nil {
			return nil, err
		}
		out.ResourceVersion = page.ResourceVersion // every page's is the snapshot's
		out.Items = append(out.Items, page.Items...)
		if len(out.Items) > 2*s.limit {
			out.Items = s.newest(out.Items)
		}
		if page.Continue == "" {
			break
		}
		o.Continue = page.Continue
	}
	out.Items = s.newest(out.Items)
	return out, nil
}

// newest keeps of items what the store would: every event its bound spares
// (kept), and of the others the limit seen last, later keys winning ties,
// as trimLocked drops them. The kept ones are copied out, so the array
// behind items, and every event it held, can go.
func (s *eventStore) newest(items []kubeapi.Event) []kubeapi.Event {
	opts := s.opts
	opts.Now = s.now()
	type ranked struct {
		i    int
		seen time.Time
		key  string
	}
	keep := make([]bool, len(items))
	var bounded []ranked
	for i := range items {
		rec := EventFrom(&items[i], opts)
		if s.kept(rec) {
			keep[i] = true
			continue
		}
		bounded = append(bounded, ranked{i, rec.LastSeen, rec.Namespace + "/" + rec.Name})
	}
	if len(bounded) <= s.limit {
		return items
	}
	slices.SortFunc(bounded, func(a, b ranked) int {
		if c := b.seen.Compare(a.seen); c != 0 {
			return c
		}
		return cmp.Compare(b.key, a.key)
	})
	for _, r := range bounded[:s.limit] {
		keep[r.i] = true
	}
	out := make([]kubeapi.Event, 0, len(items)-len(bounded)+s.limit)
	for i := range items {
		if keep[i] {
			out = append(out, items[i])
		}
	}
	return out
}

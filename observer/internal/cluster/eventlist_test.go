package cluster

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/watchlist"

	"kubehz.dev/agent/shared/kubeapi"
)

// pagedEvents serves its pages chained by continue tokens, as the apiserver
// pages a consistent list, and records every request.
type pagedEvents struct {
	pages [][]kubeapi.Event
	calls []metav1.ListOptions
}

func (p *pagedEvents) List(_ context.Context, o metav1.ListOptions) (*kubeapi.EventList, error) {
	p.calls = append(p.calls, o)
	i := 0
	if o.Continue != "" {
		i, _ = strconv.Atoi(o.Continue)
	}
	l := &kubeapi.EventList{Items: slices.Clone(p.pages[i])}
	l.ResourceVersion = "42"
	if i+1 < len(p.pages) {
		l.Continue = strconv.Itoa(i + 1)
	}
	return l, nil
}

func (p *pagedEvents) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewEmptyWatch(), nil
}

// A flood of Warning events is listed a page at a time from a consistent
// read (not the watch cache's whole answer at resourceVersion 0), and the
// list ends holding what the store keeps: the newest past its bound, and
// every Machine event of the MD namespace, however old.
func TestEventList_PagesAndKeepsWhatTheStoreKeeps(t *testing.T) {
	s := newEventStore(opts(false), func() time.Time { return t0.Add(time.Hour) }, 10, func() {})
	src := &pagedEvents{pages: make([][]kubeapi.Event, 4)}
	for i := range 3 {
		src.pages[0] = append(src.pages[0], *machineEvent(fmt.Sprintf("m%d", i), t0.Add(-time.Hour)))
	}
	for i := range 100 { // e00..e99, seen i seconds after t0, dealt over the pages
		src.pages[i%4] = append(src.pages[i%4], *eventAt("tenant", fmt.Sprintf("e%02d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	list, err := s.list(t.Context(), src, kubeapi.Selectors{Field: "type=Warning"}, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list.Items {
		got = append(got, e.Name)
	}
	slices.Sort(got)
	want := []string{"e90", "e91", "e92", "e93", "e94", "e95", "e96", "e97", "e98", "e99", "m0", "m1", "m2"}
	if !slices.Equal(got, want) || list.ResourceVersion != "42" {
		t.Errorf("list kept %v at %q, want %v at the snapshot's 42", got, list.ResourceVersion, want)
	}
	if len(src.calls) != 4 {
		t.Fatalf("%d requests, want one per page, 4", len(src.calls))
	}
	for i, o := range src.calls {
		wantContinue := ""
		if i > 0 {
			wantContinue = strconv.Itoa(i)
		}
		if o.ResourceVersion != "" || o.Limit != 500 || o.Continue != wantContinue || o.FieldSelector != "type=Warning" {
			t.Errorf("request %d: %+v, want resourceVersion \"\", limit 500, continue %q, the Warning selector", i, o, wantContinue)
		}
	}
}

// However many pages a flood fills, one list reads at most 1,000 of them.
func TestEventList_ReadsAtMostAThousandPages(t *testing.T) {
	s := newEventStore(opts(false), func() time.Time { return t0.Add(time.Hour) }, 10, func() {})
	src := &pagedEvents{}
	for i := range 1001 {
		src.pages = append(src.pages, []kubeapi.Event{*eventAt("tenant", fmt.Sprintf("e%04d", i), t0)})
	}
	list, err := s.list(t.Context(), src, kubeapi.Selectors{}, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.calls) != 1000 || len(list.Items) != 10 {
		t.Errorf("%d requests, %d events kept; want 1000 and the bound, 10", len(src.calls), len(list.Items))
	}
}

// BenchmarkEventListFlood prints what listing a flood of 50,000 Warning
// events holds once the list is done, with the events as the observer's
// decoder hands them over: read whole, as a list at resourceVersion 0 or a
// pager hands the reflector, against read a page at a time and cut to the
// store's bound of 2,000.
func BenchmarkEventListFlood(b *testing.B) {
	const flood = 50000
	src := &pagedEvents{}
	for i := range flood {
		if i%500 == 0 {
			src.pages = append(src.pages, make([]kubeapi.Event, 0, 500))
		}
		last := len(src.pages) - 1
		src.pages[last] = append(src.pages[last], *decodedEvent(i).(*kubeapi.Event))
	}
	s := newEventStore(opts(false), func() time.Time { return t0.Add(time.Hour) }, MaxEventRecords, func() {})
	var whole, paged int64
	runs := 0
	for b.Loop() {
		src.calls = nil
		base := liveHeap(b)
		var all []kubeapi.Event
		for _, p := range src.pages {
			all = append(all, slices.Clone(p)...)
		}
		whole += liveHeap(b) - base
		runtime.KeepAlive(all)
		base = liveHeap(b)
		list, err := s.list(context.Background(), src, kubeapi.Selectors{}, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		paged += liveHeap(b) - base
		runtime.KeepAlive(list)
		runs++
	}
	b.ReportMetric(float64(whole)/float64(runs)/(1<<20), "whole-MiB")
	b.ReportMetric(float64(paged)/float64(runs)/(1<<20), "paged-MiB")
	b.ReportMetric(float64(whole)/float64(paged), "whole/paged")
}

// The list's cut only holds if the reflector lists: streamed over the
// watch, the list would fill the reflector's own store, which has no bound.
func TestEventList_IsNeverStreamed(t *testing.T) {
	s := newEventStore(opts(false), func() time.Time { return t0.Add(time.Hour) }, 10, func() {})
	lw := s.listerWatcher(&pagedEvents{}, kubeapi.Selectors{})
	if !watchlist.DoesClientNotSupportWatchListSemantics(lw) {
		t.Error("the events' ListerWatcher lets the reflector stream its list")
	}
}

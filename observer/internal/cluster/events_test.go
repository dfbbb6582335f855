package cluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
)

func eventAt(ns, name string, seen time.Time) *kubeapi.Event {
	e := warning(ns, name)
	e.LastTimestamp = metav1.NewTime(seen)
	return kubeapitest.MustConvert[*kubeapi.Event](e)
}

func machineEvent(name string, seen time.Time) *kubeapi.Event {
	e := warning("kube-system", name)
	e.Reason, e.Message = ReconcilingError, "failed to create server"
	e.InvolvedObject = corev1.ObjectReference{Kind: MachineKind, Namespace: "kube-system", Name: "pool-a-" + name}
	e.LastTimestamp = metav1.NewTime(seen)
	return kubeapitest.MustConvert[*kubeapi.Event](e)
}

func names(s *eventStore) []string {
	var out []string
	for _, obj := range s.List() {
		out = append(out, obj.(*Event).Name)
	}
	slices.Sort(out)
	return out
}

// Anyone who may create Events can create any number: past its bound the
// store drops the records seen longest ago, down to nine tenths of the
// bound, and keeps the newest and every Machine event of the MD namespace,
// however old. Below the bound nothing is dropped (the control).
func TestEventStore_AFloodKeepsTheNewestAndTheMachineEvents(t *testing.T) {
	s := newEventStore(opts(false), func() time.Time { return t0.Add(time.Hour) }, 10, func() {})
	for i := range 3 {
		if err := s.Add(machineEvent(fmt.Sprintf("m%d", i), t0.Add(-time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if err := s.Add(eventAt("tenant", fmt.Sprintf("e%02d", i), t0.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.len(); n != 13 {
		t.Fatalf("control: %d records at the bound, want all 13", n)
	}
	if err := s.Add(eventAt("tenant", "e10", t0.Add(10*time.Second))); err != nil {
		t.Fatal(err)
	}
	want := []string{"e02", "e03", "e04", "e05", "e06", "e07", "e08", "e09", "e10", "m0", "m1", "m2"}
	if got := names(s); !slices.Equal(got, want) {
		t.Fatalf("past the bound the store kept %v, want %v", got, want)
	}

	// A dropped event seen again comes back; one deleted while dropped is
	// nothing to delete.
	if err := s.Update(eventAt("tenant", "e00", t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(eventAt("tenant", "e01", t0)); err != nil {
		t.Fatal(err)
	}
	if got := names(s); !slices.Contains(got, "e00") || len(got) != 13 {
		t.Errorf("after e00 was seen again the store holds %v, want it among 13", got)
	}

	// A relist bounds the same way.
	var items []any
	for i := range 12 {
		items = append(items, eventAt("tenant", fmt.Sprintf("r%02d", i), t0.Add(time.Duration(i)*time.Second)))
	}
	if err := s.Replace(items, "1"); err != nil {
		t.Fatal(err)
	}
	if got := names(s); len(got) != 10 || got[0] != "r02" || got[9] != "r11" {
		t.Errorf("after a relist of 12 the store holds %v, want r02 to r11", got)
	}
}

// An event's own times are its writer's word: one dated past the
// observer's clock by more than a minute, or before 1970, is dated by its
// creationTimestamp instead, which the apiserver sets; one within the
// minute is believed (the control).
func TestEventFrom_ATimeFromTheFutureOrBefore1970GivesWayToCreation(t *testing.T) {
	now := t0.Add(time.Hour)
	created := t0.Add(-time.Hour)
	tests := []struct {
		name string
		seen time.Time
		want time.Time
	}{
		{"within a minute of the clock is believed", now.Add(59 * time.Second), now.Add(59 * time.Second)},
		{"past the clock by more than a minute", now.Add(61 * time.Second), created},
		{"years ahead", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), created},
		{"before 1970", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), created},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := warning("shop", "web-0.17f")
			e.LastTimestamp = metav1.NewTime(tt.seen)
			o := opts(false)
			o.Now = now
			if got := EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), o).LastSeen; !got.Equal(tt.want) {
				t.Errorf("LastSeen = %v, want %v", got, tt.want)
			}
		})
	}
}

// Outside the MD namespace no Machine of the beat's lives: a retry-loop
// Warning there, even in its Machine's own namespace, keeps neither the
// Machine's name nor its message. In the MD namespace it keeps both (the
// control).
func TestEventFrom_AMachineEventOutsideTheMDNamespaceKeepsNoMachine(t *testing.T) {
	got := EventFrom(machineEvent("x", t0), opts(false))
	if got.InvolvedName == "" || got.Message == "" {
		t.Fatalf("control: a retry loop in the MD namespace kept %+v", got)
	}
	e := warning("tenant", "pool-a-x.17f")
	e.Reason, e.Message = ReconcilingError, "attacker text"
	e.InvolvedObject = corev1.ObjectReference{Kind: MachineKind, Namespace: "tenant", Name: "pool-a-x"}
	got = EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), opts(false))
	if got.InvolvedNamespace != "" || got.InvolvedName != "" || got.Message != "" {
		t.Errorf("a Machine Warning in namespace tenant kept %+v; want no Machine and no message", got)
	}
}

// The observer's own event store keeps at most 2,000 records past the MD
// namespace's Machine events, trimming to 1,800 once a flood passes that.
func TestCache_KeepsAtMostTwoThousandWarningEvents(t *testing.T) {
	c := New(Source{}, Options{Events: opts(false), Now: func() time.Time { return t0.Add(time.Hour) }})
	for i := range 2000 {
		if err := c.events.Add(eventAt("tenant", fmt.Sprintf("e%04d", i), t0.Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.events.len(); n != 2000 {
		t.Fatalf("control: %d records of 2,000", n)
	}
	if err := c.events.Add(eventAt("tenant", "e2000", t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if n := c.events.len(); n != 1800 {
		t.Errorf("%d records after the 2,001st, want 1,800", n)
	}
}

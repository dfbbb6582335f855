package cluster

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
	"kubehz.dev/agent/shared/testkit"
)

var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

// opts is what the tests' records keep: kube-system is the MD namespace,
// and the events are read an hour after t0.
func opts(keepMessage bool) EventOptions {
	return EventOptions{KeepMessage: keepMessage, MDNamespace: "kube-system", Now: t0.Add(time.Hour)}
}

// eventTransform is the event store's transform, under opts.
func eventTransform(keepMessage bool) cache.TransformFunc {
	return newEventStore(opts(keepMessage), func() time.Time { return t0.Add(time.Hour) }, MaxEventRecords, func() {}).Transformer()
}

// managed is a managedFields entry of the kind every server-side apply
// leaves behind; none of it may reach a cache.
var managed = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationApply}}

func warning(ns, name string) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, ManagedFields: managed,
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour)),
		},
		Type:           corev1.EventTypeWarning,
		Reason:         "FailedMount",
		Message:        "volume secret-x not found",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0"},
		Count:          2,
		LastTimestamp:  metav1.NewTime(t0),
	}
}

func TestEventFrom_LastSeenPrecedence(t *testing.T) {
	series := t0.Add(3 * time.Minute)
	last := t0.Add(2 * time.Minute)
	eventTime := t0.Add(time.Minute)
	created := t0
	tests := []struct {
		name   string
		series *corev1.EventSeries
		last   time.Time
		evTime time.Time
		want   time.Time
	}{
		{
			name:   "series lastObservedTime wins over everything",
			series: &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(series)},
			last:   last, evTime: eventTime,
			want: series,
		},
		{
			name:   "series without lastObservedTime falls back to lastTimestamp",
			series: &corev1.EventSeries{Count: 4},
			last:   last, evTime: eventTime,
			want: last,
		},
		{
			name: "lastTimestamp wins over eventTime",
			last: last, evTime: eventTime,
			want: last,
		},
		{
			name:   "eventTime when lastTimestamp is unset",
			evTime: eventTime,
			want:   eventTime,
		},
		{
			name: "creationTimestamp when nothing else is set",
			want: created,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &corev1.Event{
				ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
				Series:     tt.series,
			}
			if !tt.last.IsZero() {
				e.LastTimestamp = metav1.NewTime(tt.last)
			}
			if !tt.evTime.IsZero() {
				e.EventTime = metav1.NewMicroTime(tt.evTime)
			}
			if got := EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), opts(false)).LastSeen; !got.Equal(tt.want) {
				t.Errorf("LastSeen = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEventFrom_MessageKeptOnlyWhenAllowed(t *testing.T) {
	normal := warning("shop", "web-0.17f")
	normal.Type = corev1.EventTypeNormal
	tests := []struct {
		name        string
		event       *corev1.Event
		keepMessage bool
		want        *Event
	}{
		{
			name:  "message dropped when notes may not leave the cluster",
			event: warning("shop", "web-0.17f"),
			want: &Event{
				Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
				Warning: true, Count: 2, LastSeen: t0,
			},
		},
		{
			name:        "message kept when notes may leave the cluster",
			event:       warning("shop", "web-0.17f"),
			keepMessage: true,
			want: &Event{
				Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
				Message: "volume secret-x not found", Warning: true, Count: 2, LastSeen: t0,
			},
		},
		{
			name:  "Normal event is marked not Warning",
			event: normal,
			want: &Event{
				Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
				Count: 2, LastSeen: t0,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EventFrom(kubeapitest.MustConvert[*kubeapi.Event](tt.event), opts(tt.keepMessage)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("EventFrom =\n%+v, want\n%+v", got, tt.want)
			}
		})
	}
}

// A Machine's retry-loop Warning counts as machine-controller's only when it
// is filed in the Machine's own namespace, as every recorder files it:
// core/v1 lets an Event with eventTime name an object of another namespace,
// so a tenant could otherwise put its text into the beat's machine issues.
func TestEventFrom_AMachineEventFiledInAnotherNamespaceIsNoMachineEvent(t *testing.T) {
	e := warning("kube-system", "pool-a-xyz.17f")
	e.Reason, e.Message = ReconcilingError, "failed to create server"
	e.InvolvedObject = corev1.ObjectReference{Kind: "Machine", Namespace: "kube-system", Name: "pool-a-xyz"}
	got := EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), opts(false))
	if got.InvolvedNamespace != "kube-system" || got.InvolvedName != "pool-a-xyz" || got.Message != "failed to create server" {
		t.Fatalf("control: machine-controller's own Warning kept %+v", got)
	}

	e.Namespace, e.Message = "tenant", "attacker text"
	got = EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), opts(false))
	if got.InvolvedNamespace != "" || got.InvolvedName != "" || got.Message != "" {
		t.Errorf("a Machine Warning filed in namespace tenant kept %+v; want no Machine and no message", got)
	}
	if got.Kind != "Machine" || got.Reason != ReconcilingError {
		t.Errorf("it should still count as a Warning of its kind and reason: %+v", got)
	}
}

// Anyone who may create Events can make them huge: a record holds, and keeps
// alive, no more than the beat sends (63 units of reason and kind, 256 of
// message), and a Machine name longer than any Machine's is dropped, not cut
// to one.
func TestEventFrom_KeepsNoMoreThanTheBeatSends(t *testing.T) {
	huge := strings.Repeat("é", 1<<20)
	e := warning("kube-system", "web-0.17f")
	e.Reason, e.Message, e.InvolvedObject.Kind = huge, huge, "Machine"
	e.InvolvedObject.Name = strings.Repeat("m", 254)
	ev := kubeapitest.MustConvert[*kubeapi.Event](e)
	got := EventFrom(ev, opts(true))
	// Held, not merely shown: a cut that shared the event's memory would
	// keep the whole megabyte alive in the cache.
	for _, f := range [][2]string{{got.Reason, ev.Reason}, {got.Message, ev.Message}} {
		if testkit.Pins(f[0], f[1]) {
			t.Errorf("the record's %d-byte cut keeps the event's %d bytes alive", len(f[0]), len(f[1]))
		}
	}
	want := &Event{
		Namespace: "kube-system", Name: "web-0.17f", Reason: strings.Repeat("é", 63), Kind: "Machine",
		Message: strings.Repeat("é", 256), Warning: true, Count: 2, LastSeen: t0,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EventFrom kept reason %d bytes, message %d bytes, involved %q/%d bytes; want 126, 512 and none",
			len(got.Reason), len(got.Message), got.InvolvedNamespace, len(got.InvolvedName))
	}
	// A retry-loop Warning keeps its message for machine issues even when
	// notes stay home, clamped all the same; a 253-byte name is a Machine's.
	e.Reason, e.InvolvedObject.Name = ReconcilingError, strings.Repeat("m", 253)
	got = EventFrom(kubeapitest.MustConvert[*kubeapi.Event](e), opts(false))
	if len(got.InvolvedName) != 253 || got.Message != strings.Repeat("é", 256) {
		t.Errorf("a retry-loop Warning kept a %d-byte Machine name and a %d-byte message; want 253 and 512",
			len(got.InvolvedName), len(got.Message))
	}
}

func TestTransforms_CompactIdempotentAndRewrapTombstones(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "wrk-b", ManagedFields: managed},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	nodeRec := &Node{Name: "wrk-b", Status: "Ready", Ready: true, Roles: "worker"}
	event := kubeapitest.MustConvert[*kubeapi.Event](warning("shop", "web-0.17f"))
	pod := podPhase("shop", "web-0", corev1.PodRunning)
	podRec := &Pod{Key: "shop/web-0", Phase: PhaseRunning}
	eventRec := &Event{
		Namespace: "shop", Name: "web-0.17f", Reason: "FailedMount", Kind: "Pod",
		Warning: true, Count: 2, LastSeen: t0,
	}
	tomb := func(key string, obj any) cache.DeletedFinalStateUnknown {
		return cache.DeletedFinalStateUnknown{Key: key, Obj: obj}
	}
	tests := []struct {
		name      string
		transform cache.TransformFunc
		in        any
		want      any
	}{
		{"node becomes a record", nodeTransform, kubeapitest.MustConvert[*kubeapi.Node](node), nodeRec},
		{"node record passes through", nodeTransform, nodeRec, nodeRec},
		{"node tombstone is re-wrapped around a record", nodeTransform, tomb("wrk-b", kubeapitest.MustConvert[*kubeapi.Node](node)), tomb("wrk-b", nodeRec)},
		{"node tombstone of a record is unchanged", nodeTransform, tomb("wrk-b", nodeRec), tomb("wrk-b", nodeRec)},
		{"empty node tombstone is unchanged", nodeTransform, tomb("wrk-b", nil), tomb("wrk-b", nil)},
		{"pod becomes a record", podTransform, pod, podRec},
		{"pod record passes through", podTransform, podRec, podRec},
		{"pod tombstone is re-wrapped around a record", podTransform, tomb("shop/web-0", pod), tomb("shop/web-0", podRec)},
		{"event becomes a record without message", eventTransform(false), event, eventRec},
		{"event record passes through", eventTransform(false), eventRec, eventRec},
		{
			name:      "event tombstone is re-wrapped around a record",
			transform: eventTransform(false),
			in:        tomb("shop/web-0.17f", event),
			want:      tomb("shop/web-0.17f", eventRec),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			once, err := tt.transform(tt.in)
			if err != nil {
				t.Fatalf("first transform: %v", err)
			}
			if !reflect.DeepEqual(once, tt.want) {
				t.Fatalf("transform =\n%#v, want\n%#v", once, tt.want)
			}
			twice, err := tt.transform(once)
			if err != nil {
				t.Fatalf("second transform: %v", err)
			}
			if !reflect.DeepEqual(twice, once) {
				t.Errorf("transform is not idempotent:\n%#v\nthen\n%#v", once, twice)
			}
		})
	}
}

func TestTransforms_UnexpectedTypesAreErrors(t *testing.T) {
	tests := []struct {
		name      string
		transform cache.TransformFunc
		in        any
	}{
		{"pod into the node informer", nodeTransform, &corev1.Pod{}},
		{"full pod into the pod informer", podTransform, &corev1.Pod{}},
		{"node record into the pod informer", podTransform, &Node{Name: "wrk-b"}},
		{"node into the event informer", eventTransform(true), &corev1.Node{}},
		{"plain string", nodeTransform, "wrk-b"},
		{"nil", podTransform, nil},
		{"tombstone of the wrong type", eventTransform(false), cache.DeletedFinalStateUnknown{Key: "a/b", Obj: &corev1.Pod{}}},
		{"tombstone pointer", nodeTransform, &cache.DeletedFinalStateUnknown{Key: "wrk-b", Obj: &corev1.Node{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.transform(tt.in)
			if err == nil {
				t.Errorf("transform(%T) = %#v, want an error", tt.in, got)
			}
		})
	}
}

func TestRecords_KeyLikeTheObjectsTheyReplace(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want string
	}{
		{"node is keyed by name", &Node{Name: "wrk-b"}, "wrk-b"},
		{"pod is keyed by namespace and name", &Pod{Key: "shop/web-0"}, "shop/web-0"},
		{"event is keyed by namespace and name", &Event{Namespace: "shop", Name: "web-0.17f"}, "shop/web-0.17f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := cache.MetaNamespaceKeyFunc(tt.obj)
			if err != nil || key != tt.want {
				t.Errorf("MetaNamespaceKeyFunc = (%q, %v), want %q", key, err, tt.want)
			}
			key, err = cache.DeletionHandlingMetaNamespaceKeyFunc(tt.obj)
			if err != nil || key != tt.want {
				t.Errorf("DeletionHandlingMetaNamespaceKeyFunc = (%q, %v), want %q", key, err, tt.want)
			}
			tomb := cache.DeletedFinalStateUnknown{Key: tt.want, Obj: tt.obj}
			key, err = cache.DeletionHandlingMetaNamespaceKeyFunc(tomb)
			if err != nil || key != tt.want {
				t.Errorf("tombstone key = (%q, %v), want %q", key, err, tt.want)
			}
		})
	}
}

package store_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"kubehz.dev/agent/actor/internal/store"
	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

var _ store.Fence = (*testkit.Fence)(nil)

const (
	namespace = "kubehz-system"
	holder    = "actor-7d9f_0a1b2c3d"
)

var (
	now          = time.Date(2026, 7, 6, 12, 0, 0, 500_000_000, time.UTC)
	errLostLease = errors.New("lost lease: held by actor-1")
	configMaps   = corev1.SchemeGroupVersion.WithResource("configmaps")
)

func publisher(client *fake.Clientset, fence *testkit.Fence, at time.Time) *store.Publisher {
	return &store.Publisher{Client: client, Namespace: namespace, ConfigMap: report.ConfigMapName, Identity: holder, Fence: fence,
		Now: func() time.Time { return at }}
}

func scaled(status string) []wire.Action {
	return []wire.Action{
		{Type: wire.ActionScale, Target: "pool-a", Status: status, Detail: "replicas 2 to 3", Revision: 7},
		{Type: wire.ActionScale, Target: "pool-b", Status: wire.StatusFailed, Detail: "no MachineDeployment named \"pool-b\"", Revision: 7},
	}
}

// existing is the ConfigMap as a previous write left it, at resourceVersion rv.
func existing(t *testing.T, rv string, doc report.Document) *corev1.ConfigMap {
	t.Helper()
	data, err := report.Encode(doc)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: report.ConfigMapName, ResourceVersion: rv,
			Labels: map[string]string{"app.kubernetes.io/part-of": "kubehz", "app.kubernetes.io/component": "actor"}},
		Data: map[string]string{report.Key: data, "note": "kept"},
	}
}

func read(t *testing.T, client *fake.Clientset) (*corev1.ConfigMap, report.Document) {
	t.Helper()
	cm, err := client.Tracker().Get(configMaps, namespace, report.ConfigMapName)
	if err != nil {
		t.Fatalf("read the ConfigMap: %v", err)
	}
	c := cm.(*corev1.ConfigMap)
	doc, problems := report.Decode(c.Data[report.Key])
	if len(problems) > 0 {
		t.Fatalf("the written document decodes with problems %v:\n%s", problems, c.Data[report.Key])
	}
	return c, doc
}

// verbs lists the requests the client saw, as "verb" or "verb@resourceVersion"
// for updates.
func verbs(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		v := a.GetVerb()
		if u, ok := a.(k8stesting.UpdateAction); ok && v == "update" {
			v += "@" + u.GetObject().(*corev1.ConfigMap).ResourceVersion
		}
		out = append(out, v)
	}
	return out
}

// The actor holds no create on ConfigMaps: a missing hand-off is an error
// that says how to restore it, and nothing is written.
func TestPublish_MissingConfigMapIsAnErrorAndNothingIsCreated(t *testing.T) {
	client := fake.NewClientset()
	fence := &testkit.Fence{}
	err := publisher(client, fence, now).Publish(t.Context(), 7, scaled(wire.StatusDone))
	if err == nil || !strings.Contains(err.Error(), "re-apply deploy/actor") {
		t.Fatalf("Publish = %v, want an error naming deploy/actor", err)
	}
	if got, want := verbs(client), []string{"get"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if fence.Calls != 0 {
		t.Errorf("%d fence checks, want none", fence.Calls)
	}
}

func TestPublish_UpdatesWithTheResourceVersionItRead(t *testing.T) {
	client := fake.NewClientset(existing(t, "41", report.Document{Revision: 6, Holder: "actor-old", Actions: scaled(wire.StatusDone)}))
	if err := publisher(client, &testkit.Fence{}, now).Publish(t.Context(), 7, scaled(wire.StatusInProgress)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got, want := verbs(client), []string{"get", "update@41"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	update := client.Actions()[1].(k8stesting.UpdateActionImpl)
	if update.UpdateOptions.FieldManager != "kubehz-agent" {
		t.Errorf("field manager %q, want kubehz-agent", update.UpdateOptions.FieldManager)
	}
	cm, doc := read(t, client)
	if cm.Data["note"] != "kept" || cm.Labels["app.kubernetes.io/part-of"] != "kubehz" {
		t.Errorf("the update lost what it did not own: data %v, labels %v", cm.Data, cm.Labels)
	}
	want := report.Document{Revision: 7, Holder: holder, UpdatedAt: now.Truncate(time.Second), Actions: scaled(wire.StatusInProgress)}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("document:\n got %+v\nwant %+v", doc, want)
	}
}

func TestPublish_WritesOnlyWhenTheReportsChange(t *testing.T) {
	stored := report.Document{Revision: 7, Holder: holder, UpdatedAt: now.Add(-time.Hour), Actions: scaled(wire.StatusDone)}
	cases := []struct {
		name      string
		stored    *corev1.ConfigMap
		rev       int64
		holder    string
		actions   []wire.Action
		wantWrite bool
	}{
		{name: "same reports, later time", stored: existing(t, "41", stored), rev: 7, holder: holder, actions: scaled(wire.StatusDone)},
		{name: "a status changed", stored: existing(t, "41", stored), rev: 7, holder: holder, actions: scaled(wire.StatusFailed), wantWrite: true},
		{name: "one report fewer", stored: existing(t, "41", stored), rev: 7, holder: holder, actions: scaled(wire.StatusDone)[:1], wantWrite: true},
		{name: "a new revision", stored: existing(t, "41", stored), rev: 8, holder: holder, actions: scaled(wire.StatusDone), wantWrite: true},
		{name: "a new leader", stored: existing(t, "41", stored), rev: 7, holder: "actor-new", actions: scaled(wire.StatusDone), wantWrite: true},
		{
			name: "no reports after some", stored: existing(t, "41", stored), rev: 0, holder: holder, wantWrite: true,
		},
		{
			name: "no reports again", stored: existing(t, "41", report.Document{Holder: holder, UpdatedAt: now}), rev: 0, holder: holder,
		},
		{
			name: "a value that does not decode is rewritten",
			stored: func() *corev1.ConfigMap {
				cm := existing(t, "41", stored)
				cm.Data[report.Key] = "{not json"
				return cm
			}(),
			rev: 7, holder: holder, actions: scaled(wire.StatusDone), wantWrite: true,
		},
		{
			name: "a ConfigMap without data is filled",
			stored: func() *corev1.ConfigMap {
				cm := existing(t, "41", stored)
				cm.Data = nil
				return cm
			}(),
			rev: 7, holder: holder, actions: scaled(wire.StatusDone), wantWrite: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.stored)
			fence := &testkit.Fence{}
			p := publisher(client, fence, now)
			p.Identity = tc.holder
			if err := p.Publish(t.Context(), tc.rev, tc.actions); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			want := []string{"get"}
			if tc.wantWrite {
				want = append(want, "update@41")
			}
			if got := verbs(client); !reflect.DeepEqual(got, want) {
				t.Errorf("requests %v, want %v", got, want)
			}
			if wantFence := len(want) - 1; fence.Calls != wantFence {
				t.Errorf("%d fence checks, want %d", fence.Calls, wantFence)
			}
			_, doc := read(t, client)
			if tc.wantWrite && (doc.Revision != tc.rev || doc.Holder != tc.holder || !doc.UpdatedAt.Equal(now.Truncate(time.Second))) {
				t.Errorf("written document %+v, want revision %d by %s at %s", doc, tc.rev, tc.holder, now)
			}
		})
	}
}

func TestPublish_RetriesAConflictOnceWithAFreshRead(t *testing.T) {
	theirs := report.Document{Revision: 7, Holder: "actor-old", Actions: scaled(wire.StatusInProgress)}
	client := fake.NewClientset(existing(t, "41", report.Document{Revision: 6, Holder: "actor-old"}))
	conflicts := 1
	client.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		// The previous leader's last write lands between our read and ours.
		if err := client.Tracker().Update(configMaps, existing(t, "42", theirs), namespace); err != nil {
			t.Errorf("the other writer's update: %v", err)
		}
		return true, nil, apierrors.NewConflict(configMaps.GroupResource(), report.ConfigMapName, errors.New("the object has been modified"))
	})
	fence := &testkit.Fence{}
	if err := publisher(client, fence, now).Publish(t.Context(), 7, scaled(wire.StatusDone)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got, want := verbs(client), []string{"get", "update@41", "get", "update@42"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if fence.Calls != 2 {
		t.Errorf("%d fence checks, want one per write", fence.Calls)
	}
	if _, doc := read(t, client); doc.Holder != holder || !reflect.DeepEqual(doc.Actions, scaled(wire.StatusDone)) {
		t.Errorf("document %+v, want ours", doc)
	}
}

func TestPublish_GivesUpAfterASecondConflict(t *testing.T) {
	client := fake.NewClientset(existing(t, "41", report.Document{Revision: 6, Holder: "actor-old"}))
	client.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(configMaps.GroupResource(), report.ConfigMapName, errors.New("the object has been modified"))
	})
	err := publisher(client, &testkit.Fence{}, now).Publish(t.Context(), 7, scaled(wire.StatusDone))
	if err == nil || !strings.Contains(err.Error(), "conflicting writers") {
		t.Fatalf("error %v, want conflicting writers", err)
	}
	if got, want := verbs(client), []string{"get", "update@41", "get", "update@41"}; !reflect.DeepEqual(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}

func TestPublish_FenceRefusalWritesNothing(t *testing.T) {
	cases := []struct {
		name    string
		objects []runtime.Object
	}{
		{name: "existing ConfigMap", objects: []runtime.Object{existing(t, "41", report.Document{Revision: 6, Holder: "actor-old"})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.objects...)
			err := publisher(client, &testkit.Fence{Err: errLostLease}, now).Publish(t.Context(), 7, scaled(wire.StatusDone))
			if !errors.Is(err, errLostLease) {
				t.Errorf("error %v, want the fence's refusal", err)
			}
			if got, want := verbs(client), []string{"get"}; !reflect.DeepEqual(got, want) {
				t.Errorf("requests %v, want only the read", got)
			}
		})
	}
}

func TestPublish_ReadFailureWritesNothing(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("get", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("apiserver restarting")
	})
	fence := &testkit.Fence{}
	err := publisher(client, fence, now).Publish(t.Context(), 7, scaled(wire.StatusDone))
	if err == nil || !strings.Contains(err.Error(), "kubehz-system/kubehz-actions") || !apierrors.IsServiceUnavailable(err) {
		t.Errorf("error %v, want the failed read of kubehz-system/kubehz-actions, wrapped", err)
	}
	if fence.Calls != 0 || len(client.Actions()) != 1 {
		t.Errorf("fence checks %d, requests %v; want only the read", fence.Calls, verbs(client))
	}
}

package main

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"kubehz.dev/agent/actor/internal/cluster"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/config"
)

var _ execute.Fence = openFence{}

// TestEventRecorder_WritesReasonAndMessageWithoutARuneATerminalWouldObey:
// whatever text reaches the recorder, the Event `kubectl describe` prints
// holds no control, C1 or bidi rune, and shows the text escaped.
func TestEventRecorder_WritesReasonAndMessageWithoutARuneATerminalWouldObey(t *testing.T) {
	const hostile = "v1.35.6\x1b]0;owned\a\u009b2J\u202Eevil\r\n"
	client := fake.NewClientset()
	r := &eventRecorder{client: client, fence: openFence{}, identity: "actor-a", log: slog.New(slog.DiscardHandler)}
	r.Event(t.Context(), execute.Object{Kind: "MachineDeployment", Namespace: "kube-system", Name: "pool-a"}, true,
		"KubehzRefused"+hostile, "target "+hostile)

	list, err := client.CoreV1().Events("kube-system").List(t.Context(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("%d Events (err %v), want 1", len(list.Items), err)
	}
	ev := list.Items[0]
	const escaped = `v1.35.6\x1b]0;owned\a\u009b2J\u202eevil\r\n`
	if ev.Reason != "KubehzRefused"+escaped || ev.Message != "target "+escaped {
		t.Errorf("Event reason %q message %q, want the text escaped", ev.Reason, ev.Message)
	}
	for _, r := range ev.Reason + ev.Message {
		if !unicode.IsPrint(r) {
			t.Fatalf("the Event holds %U", r)
		}
	}
}

// TestEventRecorder_WritesNothingTheFenceRefuses: an Event is a write like
// any other, sent only while the fence says this process leads; with an
// open fence it is written (the control).
func TestEventRecorder_WritesNothingTheFenceRefuses(t *testing.T) {
	for _, tc := range []struct {
		fence execute.Fence
		want  int
	}{{openFence{}, 1}, {closedFence{}, 0}} {
		client := fake.NewClientset()
		r := &eventRecorder{client: client, fence: tc.fence, identity: "actor-a", log: slog.New(slog.DiscardHandler)}
		r.Event(t.Context(), execute.Object{Kind: "Machine", Namespace: "kube-system", Name: "m1"}, false, "KubehzHealed", "deleted")
		if n := len(client.Actions()); n != tc.want {
			t.Errorf("%T: %d requests, want %d", tc.fence, n, tc.want)
		}
	}
}

// TestMachineDeleter_SendsExactlyTheDecidedPreconditions: a Machine delete
// carries the UID and resourceVersion the heal was decided on, and a pod
// force-delete its UID with no grace, so the apiserver refuses either once
// the object is not the one decided on (a Machine replaced or changed, a
// pod recreated under its name). What reaches the API is read off the
// clients, not off the executor's fakes.
func TestMachineDeleter_SendsExactlyTheDecidedPreconditions(t *testing.T) {
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(cluster.MachineGVR.GroupVersion().WithKind("Machine"))
	m.SetNamespace("kube-system")
	m.SetName("pool-a-m1")
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{cluster.MachineGVR: "MachineList"}, m)
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web-0"}})
	d := &machineDeleter{dyn: dyn, client: client}

	if err := d.DeleteMachine(t.Context(), "kube-system", "pool-a-m1", "uid-1", "42"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeletePod(t.Context(), "apps", "web-0", "uid-p"); err != nil {
		t.Fatal(err)
	}
	deleteOptions := func(actions []k8stesting.Action) []metav1.DeleteOptions {
		var out []metav1.DeleteOptions
		for _, a := range actions {
			if del, ok := a.(k8stesting.DeleteAction); ok {
				out = append(out, del.GetDeleteOptions())
			}
		}
		return out
	}
	machine, pod := deleteOptions(dyn.Actions()), deleteOptions(client.Actions())
	if len(machine) != 1 || machine[0].Preconditions == nil ||
		ptr.Deref(machine[0].Preconditions.UID, "") != "uid-1" || ptr.Deref(machine[0].Preconditions.ResourceVersion, "") != "42" {
		t.Errorf("Machine delete options %+v, want preconditions UID uid-1 and resourceVersion 42", machine)
	}
	if len(pod) != 1 || pod[0].Preconditions == nil || ptr.Deref(pod[0].Preconditions.UID, "") != "uid-p" ||
		ptr.Deref(pod[0].GracePeriodSeconds, -1) != 0 {
		t.Errorf("pod delete options %+v, want precondition UID uid-p and grace 0", pod)
	}
}

// TestNewExecutor_CarriesTheLocalLimitsAndStartsTheCooldownWithTheTerm: the
// cluster owner's KUBEHZ_HEAL_* limits, the eviction timeout and the replica
// ceiling reach the executor as set, and a term's heal memory starts when
// the term does, so a new leader waits a whole cooldown before its first
// heal. The end-to-end suites run with the floors at the contract's own and
// a zero cooldown, so only this sees the wiring.
func TestNewExecutor_CarriesTheLocalLimitsAndStartsTheCooldownWithTheTerm(t *testing.T) {
	cfg := settings{Common: config.Common{MDNamespace: "kube-system", Namespace: "kubehz-system"}, MaxReplicas: 40, HealEvictionTimeout: 7 * time.Minute,
		HealLimits: heal.Limits{MaxInFlight: 2, MinCooldown: 11 * time.Minute, MinStartupTimeout: 12 * time.Minute, MinUnhealthyAfter: 13 * time.Minute}}
	a := &actor{cfg: cfg, log: slog.New(slog.DiscardHandler), identity: "me", client: fake.NewClientset(),
		dyn:   dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()),
		state: newStateFile(filepath.Join(t.TempDir(), "state"), "me", "test", time.Now(), slog.New(slog.DiscardHandler))}
	before := time.Now()
	e := a.newExecutor(t.Context(), nil)
	after := time.Now()
	want := heal.Limits{MaxInFlight: 2, MinCooldown: 11 * time.Minute, MinStartupTimeout: 12 * time.Minute, MinUnhealthyAfter: 13 * time.Minute}
	if e.HealLimits != want {
		t.Errorf("heal limits %+v, want %+v", e.HealLimits, want)
	}
	if e.EvictionTimeout != 7*time.Minute || e.MaxReplicas != 40 || e.Namespace != "kube-system" {
		t.Errorf("eviction timeout %s, max replicas %d, namespace %q; want 7m, 40, kube-system", e.EvictionTimeout, e.MaxReplicas, e.Namespace)
	}
	if since := e.HealMemory.Since; since.Before(before) || since.After(after) {
		t.Errorf("the term's heal memory starts at %s, not when the term did (%s to %s)", since, before, after)
	}
}

package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

func TestObserver_FirstBeatMatchesCluster(t *testing.T) {
	createNode(t, nodeSpec{name: "first-cp", ready: corev1.ConditionTrue, kubelet: "v1.37.2", cpu: "2", mem: "3900Mi",
		labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}})
	createNode(t, nodeSpec{name: "first-w1", ready: corev1.ConditionFalse,
		labels: map[string]string{"node.kubernetes.io/instance-type": "cpx21"}})
	createNode(t, nodeSpec{name: "first-w2",
		labels: map[string]string{"kubernetes.io/role": "ingress", "node-role.kubernetes.io/etcd": ""}})
	wantNodes := map[string]node{
		"first-cp": {Name: "first-cp", Status: "Ready", Ready: true, Roles: "control-plane", KubeletVersion: "v1.37.2",
			Capacity: map[string]string{"cpu": "2", "memory": "3900Mi"}},
		"first-w1": {Name: "first-w1", Status: "NotReady", Roles: "worker", InstanceType: "cpx21"},
		"first-w2": {Name: "first-w2", Status: "Unknown", Roles: "etcd,ingress"},
	}

	createNamespace(t, "e2e-first")
	for i, phase := range []corev1.PodPhase{"Running", "Running", "Running", "", "", "Succeeded", "Failed", "Unknown"} {
		createPod(t, "e2e-first", fmt.Sprintf("p%d", i), phase)
	}
	base := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	for i := range 22 {
		createEvent(t, "e2e-first", fmt.Sprintf("warn-%02d", i), corev1.EventTypeWarning, fmt.Sprintf("Reason%02d", i), "Pod",
			"message", int32(i+1), base.Add(time.Duration(i)*time.Minute))
	}
	// Newer than every Warning, so a leak of Normal events would show first.
	createEvent(t, "e2e-first", "normal-1", corev1.EventTypeNormal, "Started", "Pod", "fine", 1, base.Add(2*time.Hour))

	wantPods, wantEvents := clusterTruth(t)

	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim)
	first := decode(waitBeat(t, sim, nil))

	if first.Schema != 2 || first.ClusterID != clusterID || first.Agent.Mode != "operator" {
		t.Errorf("header = schema %d, cluster %q, mode %q", first.Schema, first.ClusterID, first.Agent.Mode)
	}
	// The pinned apiserver of this run (v1.37.2, or v1.35.8 in the
	// compatibility run), as the harness checked it at start.
	if want, _ := kube.WantKubeVersion(); first.Kubernetes.Version != want {
		t.Errorf("kubernetes.version = %q, want the apiserver's %s", first.Kubernetes.Version, want)
	}
	if _, err := time.Parse(time.RFC3339, first.Timestamp); err != nil || !strings.HasSuffix(first.Timestamp, "Z") {
		t.Errorf("timestamp %q is not RFC 3339 UTC", first.Timestamp)
	}
	allNodes, err := suite.env.Client.CoreV1().Nodes().List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Nodes) != len(allNodes.Items) {
		t.Errorf("beat has %d nodes, cluster has %d", len(first.Nodes), len(allNodes.Items))
	}
	if !sort.SliceIsSorted(first.Nodes, func(i, j int) bool { return first.Nodes[i].Name < first.Nodes[j].Name }) {
		t.Errorf("nodes are not sorted by name")
	}
	for name, want := range wantNodes {
		got, ok := first.node(name)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("node %s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	if got := podCounts(first); !reflect.DeepEqual(got, wantPods) {
		t.Errorf("pods:\n got %v\nwant %v", got, wantPods)
	}
	if !reflect.DeepEqual(first.Events, wantEvents) {
		t.Errorf("events:\n got %+v\nwant %+v", first.Events, wantEvents)
	}
}

// TestObserver_FirstBeatCarriesMachineIssuesPoolsAndInventory starts the
// observer on a cluster that already has a failed Machine, its pool and a
// ClusterInventory. A first beat without them would tell the platform to
// clear them on every restart, so the first beat waits for their first
// reads. Here those reads usually end before the caches sync anyway, so this
// test passes without the wait too; beat's TestLoop_FirstBeatWaits… pins
// the wait, and observer's TestNewObserver_FirstReadsAre… what it waits for.
func TestObserver_FirstBeatCarriesMachineIssuesPoolsAndInventory(t *testing.T) {
	mds, machines := installMachineCRDs(t)
	createPoolA(t, mds, machines)
	installInventory(t)

	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim)
	first := waitBeat(t, sim, nil)
	if first.Seq != 1 {
		t.Fatalf("the first accepted beat is request %d; the simulator refused those before it: %+v", first.Seq, sim.Requests()[0])
	}
	issues, pools := issuesOf(first)
	if len(issues) != 1 || issues[0].Machine != "pool-a-m1" || issues[0].Reason != "InvalidConfiguration" {
		t.Errorf("first beat's machineIssues = %+v, want pool-a-m1's InvalidConfiguration", issues)
	}
	if want := []pool{{Name: "pool-a", Replicas: 2, Ready: 1, APIGroup: "cluster.k8s.io"}}; !reflect.DeepEqual(pools, want) {
		t.Errorf("first beat's pools = %+v, want %+v", pools, want)
	}
	if got := normalize(first.Payload["inventory"]); !reflect.DeepEqual(got, normalize(inventorySpec())) {
		t.Errorf("first beat's inventory = %v, want the ClusterInventory's spec", got)
	}
}

// clusterTruth reads the cluster as an administrator and derives, by the
// contract's rules, the pod counts and the newest 20 Warning events a beat
// must carry.
func clusterTruth(t *testing.T) (map[string]int64, []event) {
	t.Helper()
	pods, err := suite.env.Client.CoreV1().Pods("").List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{"total": 0, "running": 0, "pending": 0, "failed": 0, "succeeded": 0, "unknown": 0}
	for _, p := range pods.Items {
		counts["total"]++
		switch p.Status.Phase {
		case corev1.PodRunning:
			counts["running"]++
		case corev1.PodPending:
			counts["pending"]++
		case corev1.PodFailed:
			counts["failed"]++
		case corev1.PodSucceeded:
			counts["succeeded"]++
		default:
			counts["unknown"]++
		}
	}
	evs, err := suite.env.Client.CoreV1().Events("").List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var warnings []corev1.Event
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning {
			warnings = append(warnings, e)
		}
	}
	sort.Slice(warnings, func(i, j int) bool {
		a, b := warnings[i], warnings[j]
		if !a.LastTimestamp.Equal(&b.LastTimestamp) {
			return a.LastTimestamp.After(b.LastTimestamp.Time)
		}
		return a.Name > b.Name
	})
	if len(warnings) > 20 {
		warnings = warnings[:20]
	}
	var want []event
	for _, e := range warnings {
		want = append(want, event{Reason: e.Reason, Kind: e.InvolvedObject.Kind, Count: e.Count,
			LastSeen: e.LastTimestamp.UTC().Format(time.RFC3339)})
	}
	return counts, want
}

func podCounts(p payload) map[string]int64 {
	out := map[string]int64{}
	for k, v := range p.Workloads.Pods {
		if f, ok := v.(float64); ok {
			out[k] = int64(f)
		}
	}
	return out
}

func TestObserver_NodeChangesAppearInLaterBeats(t *testing.T) {
	sim := startSim(t, platformsim.Options{})
	// A full interval of an hour: only a change signal can produce the beats
	// this test waits for, so it proves the change path, not the timer.
	startObserver(t, sim, "KUBEHZ_FULL_INTERVAL=1h")
	waitBeat(t, sim, nil)

	seq := sim.Seq()
	createNode(t, nodeSpec{name: "live-new", ready: corev1.ConditionTrue})
	waitBeat(t, sim, after(seq, func(p payload) bool {
		n, ok := p.node("live-new")
		return ok && n.Status == "Ready" && n.Ready
	}))

	seq = sim.Seq()
	setNodeReady(t, "live-new", corev1.ConditionFalse)
	waitBeat(t, sim, after(seq, func(p payload) bool {
		n, ok := p.node("live-new")
		return ok && n.Status == "NotReady" && !n.Ready
	}))

	seq = sim.Seq()
	if err := suite.env.Client.CoreV1().Nodes().Delete(ctxT(t), "live-new", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBeat(t, sim, after(seq, func(p payload) bool {
		_, ok := p.node("live-new")
		return !ok
	}))
}

func TestObserver_PrivacyGate(t *testing.T) {
	createNamespace(t, "e2e-private-ns")
	createPod(t, "e2e-private-ns", "p", corev1.PodRunning)
	createEvent(t, "e2e-private-ns", "probe", corev1.EventTypeWarning, "PrivacyProbe", "Pod",
		"secret-message-xyz", 1, time.Now().Add(time.Hour))

	hasProbe := func(p payload) bool {
		for _, e := range p.Events {
			if e.Reason == "PrivacyProbe" {
				return true
			}
		}
		return false
	}
	t.Run("off by default", func(t *testing.T) {
		sim := startSim(t, platformsim.Options{})
		startObserver(t, sim)
		b := waitBeat(t, sim, after(0, hasProbe))
		for _, leak := range []string{"e2e-private-ns", "secret-message-xyz", `"byNamespace"`, `"namespace"`, `"note"`} {
			if strings.Contains(string(b.Body), leak) {
				t.Errorf("beat carries %s without KUBEHZ_REPORT_NAMESPACES", leak)
			}
		}
	})
	t.Run("on when opted in", func(t *testing.T) {
		sim := startSim(t, platformsim.Options{})
		startObserver(t, sim, "KUBEHZ_REPORT_NAMESPACES=true")
		b := waitBeat(t, sim, after(0, hasProbe))
		for _, want := range []string{`"byNamespace"`, `"e2e-private-ns":1`, `"note":"secret-message-xyz"`} {
			if !strings.Contains(string(b.Body), want) {
				t.Errorf("opted-in beat lacks %s", want)
			}
		}
	})
}

// TestObserver_ClampsWhatThePlatformWouldReject sends a Warning whose reason
// and message exceed the platform's bounds, in non-BMP characters that count
// twice in UTF-16: the beat must still be accepted, with both clamped.
func TestObserver_ClampsWhatThePlatformWouldReject(t *testing.T) {
	createNamespace(t, "e2e-clamp")
	reason := "Long" + strings.Repeat("😀", 100) // 204 UTF-16 units; the bound is 63
	message := strings.Repeat("😀", 300)         // 600 units; the bound is 256
	createEvent(t, "e2e-clamp", "clamp", corev1.EventTypeWarning, reason, "Pod", message, 1, time.Now().Add(2*time.Hour))

	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim, "KUBEHZ_REPORT_NAMESPACES=true")
	b := waitBeat(t, sim, after(0, func(p payload) bool {
		for _, e := range p.Events {
			if strings.HasPrefix(e.Reason, "Long") {
				return true
			}
		}
		return false
	}))
	for _, e := range decode(b).Events {
		if !strings.HasPrefix(e.Reason, "Long") {
			continue
		}
		if n := utf16Len(e.Reason); n > 63 || n < 62 {
			t.Errorf("reason clamped to %d UTF-16 units, want 62 or 63 (never a split pair)", n)
		}
		if n := utf16Len(e.Note); n != 256 {
			t.Errorf("note clamped to %d UTF-16 units, want 256", n)
		}
		if !utf8.ValidString(e.Reason) || !utf8.ValidString(e.Note) {
			t.Errorf("clamping produced invalid UTF-8")
		}
	}
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// TestObserver_AnEventNamedPastAnyValidNameCountsUntilDeleted: core/v1 does
// not validate an Event's name, so one may be far longer than the 253 bytes
// any other object's may be. The observer keeps such a name as its digest
// (what a cache would otherwise hold twice per event); the Warning still
// counts, and its deletion still finds it, so it leaves the beat.
func TestObserver_AnEventNamedPastAnyValidNameCountsUntilDeleted(t *testing.T) {
	createNamespace(t, "e2e-longname")
	name := strings.Repeat("n", 20000)
	createEvent(t, "e2e-longname", name, corev1.EventTypeWarning, "LongName", "Pod", "m", 1, time.Now().Add(2*time.Hour))

	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim)
	hasIt := func(p payload) bool {
		for _, e := range p.Events {
			if e.Reason == "LongName" {
				return true
			}
		}
		return false
	}
	b := waitBeat(t, sim, after(0, hasIt))

	if err := suite.env.Client.CoreV1().Events("e2e-longname").Delete(ctxT(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitBeat(t, sim, after(b.Seq, func(p payload) bool { return !hasIt(p) }))
}

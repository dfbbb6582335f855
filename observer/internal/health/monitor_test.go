package health

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"

	"kubehz.dev/agent/shared/testkit"
	"kubehz.dev/agent/shared/wire"
)

func readyPods() []runtime.Object {
	return []runtime.Object{
		staticPod("kube-scheduler-ctl-a", "kube-scheduler", corev1.PodRunning, corev1.ConditionTrue),
		staticPod("kube-controller-manager-ctl-a", "kube-controller-manager", corev1.PodRunning, corev1.ConditionTrue),
		staticPod("etcd-ctl-a", "etcd", corev1.PodRunning, corev1.ConditionTrue),
	}
}

func TestMonitor_ReportsReadyzStaticPodsAndTheServingCertificate(t *testing.T) {
	stub := newAPIServerStub(t)
	h := start(t, fake.NewClientset(readyPods()...), stub)

	await(t, "components", h.m.Components,
		[]wire.Component{up("apiserver"), up("controller-manager"), up("etcd"), up("scheduler")})
	await(t, "certificates", h.m.Certificates, expires(stub.srv.Certificate().NotAfter))
	if h.notified.Load() == 0 {
		t.Error("notify was never called")
	}
}

func TestMonitor_FailingReadyzIsReadFromThe500Body(t *testing.T) {
	stub := newAPIServerStub(t)
	h := start(t, fake.NewClientset(), stub)
	await(t, "components", h.m.Components, []wire.Component{up("apiserver"), up("etcd")})
	before := h.notified.Load()

	stub.answer.Store(answerEtcdDown)
	h.clk.Step(interval)
	await(t, "components", h.m.Components, []wire.Component{down("apiserver"), down("etcd")})
	// The notification follows the publish, outside the lock: await it too.
	testkit.Await(t, patience, "a notification of the component going Unhealthy",
		func() bool { return h.notified.Load() != before })
}

func TestMonitor_ForbiddenReadyzOmitsApiserverAndEtcdAndLogsOnce(t *testing.T) {
	stub := newAPIServerStub(t)
	stub.answer.Store(answerForbidden)
	h := start(t, fake.NewClientset(readyPods()...), stub)
	await(t, "components", h.m.Components, []wire.Component{up("controller-manager"), up("scheduler")})
	for probes := int32(2); probes <= 3; probes++ {
		h.clk.Step(interval)
		await(t, "readyz requests", stub.hits.Load, probes)
	}
	stub.answer.Store(answerPassing)
	h.clk.Step(interval)
	await(t, "components", h.m.Components,
		[]wire.Component{up("apiserver"), up("controller-manager"), up("etcd"), up("scheduler")})

	if n := h.logs.Count("Readyz probe failed"); n != 1 {
		t.Errorf("failure logged %d times over 3 probes, want once:\n%s", n, h.logs.String())
	}
	if n := h.logs.Count("Readyz probe answers again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, h.logs.String())
	}
}

func TestMonitor_StaticPodChangesNotifyWithoutWaitingForAProbe(t *testing.T) {
	client := fake.NewClientset(readyPods()...)
	h := start(t, client, nil)
	await(t, "components", h.m.Components, []wire.Component{up("controller-manager"), up("scheduler")})
	before := h.notified.Load()

	pods := client.CoreV1().Pods("kube-system")
	notReady := staticPod("kube-scheduler-ctl-a", "kube-scheduler", corev1.PodRunning, corev1.ConditionFalse)
	if _, err := pods.UpdateStatus(t.Context(), notReady, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, "components", h.m.Components, []wire.Component{up("controller-manager"), down("scheduler")})
	testkit.Await(t, patience, "a notification of the scheduler going Unhealthy",
		func() bool { return h.notified.Load() != before })

	if err := pods.Delete(t.Context(), "kube-controller-manager-ctl-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, "components", h.m.Components, []wire.Component{down("scheduler")})
	if got := h.m.Certificates(); got != nil {
		t.Errorf("certificates = %+v with no TLS and no CSR, want nil", got)
	}
}

func TestMonitor_EarliestApprovedCSRCertificateBeatsTheServingCertificateAndNotifies(t *testing.T) {
	stub := newAPIServerStub(t)
	month := t0.Add(30 * 24 * time.Hour)
	client := fake.NewClientset(
		csr("kubelet-serving-a", certPEM(t, month), certificatesv1.CertificateApproved),
		csr("kubelet-serving-b", certPEM(t, t0.Add(24*time.Hour)), certificatesv1.CertificateDenied),
		csr("kubelet-serving-c", certPEM(t, t0.Add(-time.Hour)), certificatesv1.CertificateApproved),
	)
	h := start(t, client, stub)
	await(t, "certificates", h.m.Certificates, expires(month))

	// A newly issued certificate shows without a probe: the informer has it,
	// and the change of expiry notifies at once, as a change the beat must
	// not wait for. Each notification records the expiry it found, so one
	// left over from the first probe cannot pass for it.
	week := t0.Add(7 * 24 * time.Hour)
	if _, err := client.CertificatesV1().CertificateSigningRequests().Create(t.Context(),
		csr("kubelet-serving-d", certPEM(t, week), certificatesv1.CertificateApproved), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	await(t, "certificates", h.m.Certificates, expires(week))
	testkit.Await(t, patience, "a notification that finds the earlier expiry", func() bool { return h.notifiedWith(expires(week)) })
}

func TestMonitor_ForbiddenCSRReadIsReprobedEachIntervalAndLoggedOnce(t *testing.T) {
	month := t0.Add(30 * 24 * time.Hour)
	client := fake.NewClientset(csr("kubelet-serving-a", certPEM(t, month), certificatesv1.CertificateApproved))
	var forbid atomic.Bool
	var lists atomic.Int32
	forbid.Store(true)
	client.PrependReactor("list", "certificatesigningrequests", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		if forbid.Load() {
			return true, nil, apierrors.NewForbidden(
				schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "",
				fmt.Errorf("RBAC: list not granted"))
		}
		return false, nil, nil
	})
	h := start(t, client, nil)

	await(t, "CSR lists", lists.Load, 1)
	for probes := int32(2); probes <= 3; probes++ {
		h.clk.Step(interval)
		await(t, "CSR lists", lists.Load, probes)
	}
	if got := h.m.Certificates(); got != nil {
		t.Errorf("certificates = %+v while CSRs are forbidden, want nil", got)
	}
	forbid.Store(false)
	h.clk.Step(interval)
	await(t, "certificates", h.m.Certificates, expires(month))

	if n := h.logs.Count("CertificateSigningRequests unreadable"); n != 1 {
		t.Errorf("forbidden CSR read logged %d times over 3 probes, want once:\n%s", n, h.logs.String())
	}
	if n := h.logs.Count("CertificateSigningRequests readable"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, h.logs.String())
	}
}

func TestMonitor_NotifiesOnlyWhenComponentsChange(t *testing.T) {
	var notified int
	m := New(fakeSource(fake.NewClientset()), nil, testingclock.NewFakeClock(t0), Options{Interval: interval,
		Notify: func() { notified++ }})

	m.publish()
	if notified != 0 || m.Components() != nil {
		t.Fatalf("nothing known: notified %d, components %v", notified, m.Components())
	}
	m.lastReadyz = &Readyz{Passed: true, Checks: map[string]bool{"etcd": true}}
	m.publish()
	m.publish()
	if notified != 1 {
		t.Errorf("notified %d times for one change, want 1", notified)
	}
	got := m.Components()
	got[0].Status = "mutated"
	if m.Components()[0].Status != Healthy {
		t.Error("Components returned the monitor's own slice")
	}
}

// Behind one address, each probe of an HA control plane may reach another
// member, each with its own serving certificate. The expiry is the earliest
// of those seen, not the last one read: the latter flipped at every probe
// that reached another member, and each flip was a change to beat on.
func TestMonitor_HAMembersServingCertificatesGiveTheEarliestWithoutFlipping(t *testing.T) {
	// A handshake checks validity against the wall clock, not the fake one.
	now := time.Now().UTC().Truncate(time.Second)
	year, month := now.Add(365*24*time.Hour), now.Add(30*24*time.Hour)
	stub := newHAStub(t, year, month)
	h := start(t, fake.NewClientset(), stub)
	h.probes(t, 6)
	await(t, "certificates", h.m.Certificates, expires(month))
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, c := range h.seen {
		if reflect.DeepEqual(c, expires(month)) {
			for _, later := range h.seen[i+1:] {
				if !reflect.DeepEqual(later, expires(month)) {
					var all []string
					for _, c := range h.seen {
						all = append(all, fmt.Sprint(c))
					}
					t.Fatalf("after the earlier member's expiry, a notification found %v; notifications found %v", later, all)
				}
			}
			return
		}
	}
}

// A member whose certificate the client does not trust fails its
// handshake; what the other members presented still stands, rather than
// the expiry turning unknown at every probe that reaches it.
func TestMonitor_AFailedHandshakeKeepsWhatTheOtherMembersPresented(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	year := now.Add(365 * 24 * time.Hour)
	stub := newHAStub(t, year, now.Add(30*24*time.Hour))
	stub.ca = stub.members[0] // the second member is not trusted
	h := start(t, fake.NewClientset(), stub)
	h.probes(t, 6)
	await(t, "certificates", h.m.Certificates, expires(year))
	h.mu.Lock()
	defer h.mu.Unlock()
	known := false
	for _, c := range h.seen {
		known = known || c != nil
		if known && !reflect.DeepEqual(c, expires(year)) {
			t.Fatalf("a notification found %v once the trusted member's expiry was known", c)
		}
	}
	if !strings.Contains(h.logs.String(), "unreadable") {
		t.Errorf("the failed handshakes were not logged: %s", h.logs.String())
	}
}

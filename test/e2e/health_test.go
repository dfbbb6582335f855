package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// healthPayload is the beat with the control-plane health keys, declared
// from the contract like payload itself.
type healthPayload struct {
	payload
	Components   []healthComponent   `json:"components"`
	Certificates *healthCertificates `json:"certificates"`
}

type healthComponent struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

type healthCertificates struct {
	ExpiresAt string `json:"expiresAt"`
}

func decodeHealth(b platformsim.Beat) healthPayload {
	var p healthPayload
	_ = json.Unmarshal(b.Body, &p)
	return p
}

func (p healthPayload) expiresAt() string {
	if p.Certificates == nil {
		return ""
	}
	return p.Certificates.ExpiresAt
}

func (p healthPayload) component(name string) string {
	for _, c := range p.Components {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

// waitHealth waits up to limit for an accepted beat after seq that ok
// accepts, and returns it with its sequence number. On timeout it fails with
// what it waited for and the health view of the last beat it saw.
func waitHealth(t *testing.T, sim *platformsim.Server, seq uint64, limit time.Duration, what string,
	ok func(healthPayload) bool) (healthPayload, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var last *healthPayload
	b, err := sim.WaitBeat(ctx, func(b platformsim.Beat) bool {
		if b.Seq <= seq {
			return false
		}
		p := decodeHealth(b)
		last = &p
		return ok(p)
	})
	if err != nil {
		if last == nil {
			t.Fatalf("no beat at all within %s while waiting for %s: %v", limit, what, err)
		}
		t.Fatalf("no beat with %s within %s; the last had components %v, expiresAt %q",
			what, limit, last.Components, last.expiresAt())
	}
	return decodeHealth(b), b.Seq
}

// readyzTruth asks env's apiserver, as an administrator, for its verbose
// readiness report and derives what a beat must say of the apiserver (the
// overall verdict) and etcd (the check named etcd; absent when the apiserver
// runs none or excludes it). A failing apiserver answers 500 with the same
// report, so the body is read whatever the status.
func readyzTruth(t *testing.T, env *kube.Env) []healthComponent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := env.Client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "").DoRaw(ctx)
	verdict, etcd := "", ""
	lines := bufio.NewScanner(bytes.NewReader(body))
	for lines.Scan() {
		switch line := strings.TrimSpace(lines.Text()); line {
		case "readyz check passed":
			verdict = "Healthy"
		case "readyz check failed":
			verdict = "Unhealthy"
		case "[+]etcd ok":
			etcd = "Healthy"
		default:
			if strings.HasPrefix(line, "[-]etcd ") {
				etcd = "Unhealthy"
			}
		}
	}
	if verdict == "" {
		t.Fatalf("GET /readyz?verbose gave no verdict (err %v):\n%s", err, body)
	}
	out := []healthComponent{{"apiserver", verdict}}
	if etcd != "" {
		out = append(out, healthComponent{"etcd", etcd})
	}
	return out
}

func sortedComponents(cs ...healthComponent) []healthComponent {
	slices.SortFunc(cs, func(a, b healthComponent) int { return strings.Compare(a.Name, b.Name) })
	return cs
}

// createControlPlanePod creates a pod shaped like a kubeadm static pod in
// kube-system and writes the status its kubelet would: Running, with the
// Ready condition given.
func createControlPlanePod(t *testing.T, name, component string, ready corev1.ConditionStatus) {
	t.Helper()
	ctx := ctxT(t)
	c := suite.env.Client.CoreV1().Pods(metav1.NamespaceSystem)
	p, err := c.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"component": component, "tier": "control-plane"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: component, Image: "example.invalid/none"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	setPodReady(t, p, ready)
}

func setPodReady(t *testing.T, p *corev1.Pod, ready corev1.ConditionStatus) {
	t.Helper()
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
	if _, err := suite.env.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctxT(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestObserver_ComponentsMatchReadyz(t *testing.T) {
	fromReadyz := readyzTruth(t, suite.env)
	if len(fromReadyz) != 2 {
		t.Fatalf("the test apiserver's readyz runs no etcd check (%v), so this test would prove nothing of etcd", fromReadyz)
	}
	createControlPlanePod(t, "kube-scheduler-e2e-health", "kube-scheduler", corev1.ConditionTrue)
	createControlPlanePod(t, "kube-controller-manager-e2e-health", "kube-controller-manager", corev1.ConditionFalse)
	want := sortedComponents(append(slices.Clone(fromReadyz),
		healthComponent{"controller-manager", "Unhealthy"}, healthComponent{"scheduler", "Healthy"})...)

	sim := startSim(t, platformsim.Options{})
	startObserver(t, sim)
	_, seq := waitHealth(t, sim, 0, beatWait, "components "+toString(want), func(p healthPayload) bool {
		return slices.Equal(p.Components, want)
	})

	// The controller-manager turning ready and the scheduler's pod going
	// away (as on a managed control plane) show in later beats.
	cm, err := suite.env.Client.CoreV1().Pods(metav1.NamespaceSystem).Get(ctxT(t), "kube-controller-manager-e2e-health", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPodReady(t, cm, corev1.ConditionTrue)
	zero := int64(0)
	if err := suite.env.Client.CoreV1().Pods(metav1.NamespaceSystem).Delete(ctxT(t), "kube-scheduler-e2e-health",
		metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	want = sortedComponents(append(slices.Clone(fromReadyz), healthComponent{"controller-manager", "Healthy"})...)
	waitHealth(t, sim, seq, beatWait, "components "+toString(want), func(p healthPayload) bool {
		return slices.Equal(p.Components, want)
	})
}

func toString(cs []healthComponent) string {
	b, _ := json.Marshal(cs)
	return string(b)
}

// TestObserver_ComponentsReportAFailingCheck stops the etcd of a control
// plane of its own: the apiserver then answers /readyz with 500 and a report
// whose etcd check fails, which the observer must read as etcd and the
// apiserver Unhealthy rather than as a failed probe (which omits both).
func TestObserver_ComponentsReportAFailingCheck(t *testing.T) {
	env, err := kube.Start(kube.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Registered first, so it runs last: after the observer has stopped.
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop the second control plane: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.ApplyKustomization(ctx, filepath.Join(env.Root, "deploy", "observer")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "observer.kubeconfig")
	if err := env.ServiceAccountKubeconfig(ctx, "kubehz-system", "kubehz-observer", kubeconfig); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "agent-token")
	writeToken(t, tokenFile, platformsim.DefaultToken)
	sim := startSim(t, platformsim.Options{})
	p, err := kube.StartProcess(suite.observerBin, []string{
		"CLUSTER_ID=" + clusterID,
		"KUBEHZ_API_URL=" + sim.URL(),
		"KUBEHZ_AGENT_TOKEN_FILE=" + tokenFile,
		"KUBECONFIG=" + kubeconfig,
		"KUBEHZ_FULL_INTERVAL=1s",
		"KUBEHZ_DEBOUNCE=200ms",
		"KUBEHZ_MIN_GAP=500ms",
		"KUBEHZ_LOG_LEVEL=debug",
		"KUBEHZ_LIVENESS_FILE=" + filepath.Join(dir, "alive"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !p.Exited() {
			_, _ = p.Stop(20 * time.Second)
		}
		if t.Failed() {
			t.Logf("observer output:\n%s", tail(p.Output(), 6000))
		}
	})

	const limit = time.Minute
	waitHealth(t, sim, 0, limit, "etcd Healthy", func(h healthPayload) bool { return h.component("etcd") == "Healthy" })
	seq := sim.Seq()
	if err := env.StopEtcd(); err != nil {
		t.Fatal(err)
	}
	got, _ := waitHealth(t, sim, seq, limit, "etcd and apiserver Unhealthy", func(h healthPayload) bool {
		return h.component("etcd") == "Unhealthy" && h.component("apiserver") == "Unhealthy"
	})
	if truth := readyzTruth(t, env); !slices.Equal(got.Components, truth) {
		t.Errorf("components %v, the apiserver's readyz now says %v", got.Components, truth)
	}

	code, err := p.Stop(20 * time.Second)
	if err != nil || code != 0 {
		t.Errorf("observer did not stop cleanly with etcd down (code %d, %v)", code, err)
	}
}

// servingCertNotAfter dials the suite's apiserver with the administrator's
// TLS settings and returns the NotAfter of the leaf it presents.
func servingCertNotAfter(t *testing.T) time.Time {
	t.Helper()
	cfg, err := rest.TLSConfigFor(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := rest.DefaultServerUrlFor(suite.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	conn, err := (&tls.Dialer{Config: cfg}).DialContext(ctxT(t), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].NotAfter
}

func rfc3339(at time.Time) string { return at.UTC().Truncate(time.Second).Format(time.RFC3339) }

// issueCSR creates a CSR for a fresh key, gives it verdict (Approved,
// Denied, or "" to leave it pending) through the approval subresource, and
// writes to its status a certificate expiring at notAfter, as its signer
// would; failed adds the Failed condition a signer sets when it gives up.
func issueCSR(t *testing.T, name string, verdict certificatesv1.RequestConditionType, failed bool, notAfter time.Time) {
	t.Helper()
	ctx := ctxT(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{CommonName: name}
	req, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	c := suite.env.Client.CertificatesV1().CertificateSigningRequests()
	csr, err := c.Create(ctx, &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: req}),
			SignerName: "example.com/e2e-health",
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if verdict != "" {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: verdict, Status: corev1.ConditionTrue, Reason: "E2E", Message: "set by the health e2e test"})
		if csr, err = c.UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if failed {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateFailed, Status: corev1.ConditionTrue, Reason: "E2E", Message: "signer gave up"})
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	csr.Status.Certificate = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if _, err := c.UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestObserver_CertificateExpiryIsTheEarliestKnown(t *testing.T) {
	servingAt := servingCertNotAfter(t)
	serving := rfc3339(servingAt)
	sim := startSim(t, platformsim.Options{})
	// Certificates ride the periodic beat; a 1 s interval keeps waits short.
	startObserver(t, sim, "KUBEHZ_FULL_INTERVAL=1s")
	waitHealth(t, sim, 0, beatWait, "expiresAt "+serving+" (the serving certificate)", func(p healthPayload) bool {
		return p.expiresAt() == serving
	})

	now := time.Now().UTC().Truncate(time.Second)
	issued := now.Add(48 * time.Hour)
	if !issued.Before(servingAt) {
		t.Fatalf("the serving certificate expires at %s, before the test's certificate would", serving)
	}
	// Certificates that must not count, all earlier than the approved one,
	// created first so the observer's watch has them when it has that one.
	issueCSR(t, "e2e-health-denied", certificatesv1.CertificateDenied, false, now.Add(6*time.Hour))
	issueCSR(t, "e2e-health-pending", "", false, now.Add(12*time.Hour))
	issueCSR(t, "e2e-health-failed", certificatesv1.CertificateApproved, true, now.Add(24*time.Hour))
	issueCSR(t, "e2e-health-approved", certificatesv1.CertificateApproved, false, issued)

	want := rfc3339(issued)
	_, seq := waitHealth(t, sim, 0, beatWait, "expiresAt "+want+" (the approved CSR)", func(p healthPayload) bool {
		return p.expiresAt() == want
	})
	for range 3 {
		var p healthPayload
		p, seq = waitHealth(t, sim, seq, beatWait, "a later beat", func(healthPayload) bool { return true })
		if p.expiresAt() != want {
			t.Fatalf("a later beat says expiresAt %q, want %s: a refused or pending CSR counted", p.expiresAt(), want)
		}
	}

	// Without the approved CSR, only the serving certificate is left.
	if err := suite.env.Client.CertificatesV1().CertificateSigningRequests().Delete(ctxT(t), "e2e-health-approved",
		metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, sim, seq, beatWait, "expiresAt "+serving+" again", func(p healthPayload) bool {
		return p.expiresAt() == serving
	})
}

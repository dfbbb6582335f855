package health

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
)

func csr(name string, cert []byte, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
	c := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeletServingSignerName},
		Status:     certificatesv1.CertificateSigningRequestStatus{Certificate: cert},
	}
	for _, t := range conds {
		c.Status.Conditions = append(c.Status.Conditions,
			certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue})
	}
	return c
}

func TestCSRFrom_ReadsApprovalAndTheFirstCertificateOnly(t *testing.T) {
	expiry := t0.Add(30 * 24 * time.Hour)
	cert := certPEM(t, expiry)
	later := certPEM(t, expiry.Add(time.Hour))
	key := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2, 3}})
	broken := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
	approvedFalse := csr("csr-f", cert)
	approvedFalse.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{
		{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse}}
	tests := []struct {
		name string
		in   *certificatesv1.CertificateSigningRequest
		want *CSR
	}{
		{name: "approved and issued", in: csr("csr-a", cert, certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-a", Approved: true, NotAfter: expiry}},
		{name: "pending", in: csr("csr-b", nil), want: &CSR{Name: "csr-b"}},
		{name: "approved, not yet issued", in: csr("csr-c", nil, certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-c", Approved: true}},
		{name: "denied", in: csr("csr-d", cert, certificatesv1.CertificateDenied),
			want: &CSR{Name: "csr-d", NotAfter: expiry}},
		{name: "approved then failed", in: csr("csr-e", cert, certificatesv1.CertificateApproved, certificatesv1.CertificateFailed),
			want: &CSR{Name: "csr-e", NotAfter: expiry}},
		{name: "approved condition False", in: approvedFalse, want: &CSR{Name: "csr-f", NotAfter: expiry}},
		{name: "chain: the first certificate counts", in: csr("csr-g", append(append([]byte{}, later...), cert...), certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-g", Approved: true, NotAfter: expiry.Add(time.Hour)}},
		{name: "other blocks before the certificate are skipped", in: csr("csr-h", append(append([]byte{}, key...), cert...), certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-h", Approved: true, NotAfter: expiry}},
		{name: "unparsable certificate is ignored, not skipped past", in: csr("csr-i", append(append([]byte{}, broken...), cert...), certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-i", Approved: true}},
		{name: "a date in text is never read", in: csr("csr-j", []byte("notAfter=2026-08-01T00:00:00Z"), certificatesv1.CertificateApproved),
			want: &CSR{Name: "csr-j", Approved: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CSRFrom(kubeapitest.MustConvert[*kubeapi.CertificateSigningRequest](tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestEarliest_PicksTheFirstExpiryAmongWhatIsKnown(t *testing.T) {
	serving := t0.Add(365 * 24 * time.Hour)
	approved := func(name string, notAfter time.Time) *CSR {
		return &CSR{Name: name, Approved: true, NotAfter: notAfter}
	}
	tests := []struct {
		name    string
		serving time.Time
		csrs    []*CSR
		want    time.Time
		wantOK  bool
	}{
		{name: "nothing known"},
		{name: "serving only", serving: serving, want: serving, wantOK: true},
		{name: "earlier approved CSR wins", serving: serving,
			csrs: []*CSR{approved("a", t0.Add(48*time.Hour)), approved("b", t0.Add(24*time.Hour))},
			want: t0.Add(24 * time.Hour), wantOK: true},
		{name: "serving earlier than every CSR", serving: t0.Add(time.Hour),
			csrs: []*CSR{approved("a", t0.Add(48*time.Hour))}, want: t0.Add(time.Hour), wantOK: true},
		{name: "CSRs only", csrs: []*CSR{approved("a", t0.Add(48*time.Hour))}, want: t0.Add(48 * time.Hour), wantOK: true},
		{name: "unapproved and unissued CSRs do not count", serving: serving,
			csrs: []*CSR{{Name: "denied", NotAfter: t0.Add(time.Hour)}, {Name: "pending", Approved: true}},
			want: serving, wantOK: true},
		{name: "CSR expiring exactly now still counts", serving: serving,
			csrs: []*CSR{approved("a", t0)}, want: t0, wantOK: true},
		{name: "CSR expired a second ago is left out", serving: serving,
			csrs: []*CSR{approved("a", t0.Add(-time.Second))}, want: serving, wantOK: true},
		{name: "only expired CSRs: unknown", csrs: []*CSR{approved("a", t0.Add(-time.Hour))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Earliest(tt.serving, tt.csrs, t0)
			if !got.Equal(tt.want) || ok != tt.wantOK {
				t.Errorf("got %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestServingLeaf_ReadsTheLeafFromARealHandshake(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	got, err := servingLeaf(t.Context(), trusting(srv))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(srv.Certificate()) {
		t.Errorf("leaf expires %v, want the server's certificate, expiring %v", got.NotAfter, srv.Certificate().NotAfter)
	}
}

func TestServingLeaf_RefusesAnUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	cfg := trusting(srv)
	cfg.CAData = certPEM(t, t0.Add(time.Hour)) // some other CA
	if got, err := servingLeaf(t.Context(), cfg); err == nil {
		t.Errorf("handshake succeeded with a leaf expiring %v; want a verification error", got.NotAfter)
	}
}

func TestServingLeaf_SkipsPlainHTTP(t *testing.T) {
	for _, cfg := range []*rest.Config{nil, {Host: "http://127.0.0.1:1"}, {Host: "127.0.0.1:1"}} {
		if _, err := servingLeaf(t.Context(), cfg); !errors.Is(err, errPlainHTTP) {
			t.Errorf("%+v: err = %v, want errPlainHTTP", cfg, err)
		}
	}
}

// trusting returns a client config for srv that trusts its certificate.
func trusting(srv *httptest.Server) *rest.Config {
	return &rest.Config{
		Host: srv.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		},
	}
}

package health

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/informer"
	"kubehz.dev/agent/shared/kubeapi"
)

// CSR is everything the expiry view reads from a CertificateSigningRequest.
type CSR struct {
	Name     string
	Approved bool      // Approved is True and it was neither denied nor failed
	NotAfter time.Time // of the issued certificate; zero when none parses
}

// GetObjectMeta implements metav1.ObjectMetaAccessor.
func (c *CSR) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{Name: c.Name} }

// CSRFrom compacts a CertificateSigningRequest. The expiry comes only from
// the first PEM CERTIFICATE block of status.certificate, parsed as X.509;
// anything that does not parse leaves it zero.
func CSRFrom(c *kubeapi.CertificateSigningRequest) *CSR {
	rec := &CSR{Name: c.Name, NotAfter: certNotAfter(c.Status.Certificate)}
	approved, refused := false, false
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case kubeapi.CertificateApproved:
			approved = cond.Status == kubeapi.ConditionTrue
		case kubeapi.CertificateDenied, kubeapi.CertificateFailed:
			refused = refused || cond.Status != kubeapi.ConditionFalse
		}
	}
	rec.Approved = approved && !refused
	return rec
}

func certNotAfter(data []byte) time.Time {
	for len(data) > 0 {
		block, rest := pem.Decode(data)
		if block == nil {
			return time.Time{}
		}
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return time.Time{}
			}
			return cert.NotAfter
		}
		data = rest
	}
	return time.Time{}
}

// csrTransform compacts CSRs to their approval and expiry.
var csrTransform = informer.Transform("CSR", CSRFrom)

// Earliest picks the earliest expiry the observer can see: the apiserver's
// serving certificate (zero when unknown) and every certificate issued
// through an approved CSR. A CSR certificate already past its NotAfter at now
// is left out: its holder has renewed it or never needed it longer (the CSR
// cleaner keeps issued CSRs for an hour), so it would only raise a false
// alarm. ok is false when nothing is known.
func Earliest(serving time.Time, csrs []*CSR, now time.Time) (earliest time.Time, ok bool) {
	consider := func(t time.Time) {
		if !ok || t.Before(earliest) {
			earliest, ok = t, true
		}
	}
	if !serving.IsZero() {
		consider(serving)
	}
	for _, c := range csrs {
		if c.Approved && !c.NotAfter.IsZero() && !c.NotAfter.Before(now) {
			consider(c.NotAfter)
		}
	}
	return earliest, ok
}

// errPlainHTTP says the apiserver is reached without TLS, so it presents no
// certificate; it is a skip, not a failure.
var errPlainHTTP = errors.New("apiserver host is plain http")

// servingLeaf opens a TLS connection to the apiserver exactly as the client
// does (same CA, same client certificate, same server name) and returns the
// leaf certificate it presents.
func servingLeaf(ctx context.Context, cfg *rest.Config) (*x509.Certificate, error) {
	if cfg == nil {
		return nil, errPlainHTTP
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiserver URL: %w", err)
	}
	if u.Scheme != "https" {
		return nil, errPlainHTTP
	}
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("apiserver TLS config: %w", err)
	}
	if tlsCfg == nil {
		tlsCfg = &tls.Config{} // system roots, as the client itself would use
	} else {
		tlsCfg = tlsCfg.Clone()
	}
	if tlsCfg.ServerName == "" {
		tlsCfg.ServerName = u.Hostname()
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "443")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	conn, err := (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
	}
	defer conn.Close()
	peers := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(peers) == 0 {
		return nil, fmt.Errorf("TLS handshake with %s: no certificate presented", addr)
	}
	return peers[0], nil
}

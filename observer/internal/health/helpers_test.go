package health

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"testing"
	"time"
)

// t0 is the fixed "now" of every test.
var t0 = time.Date(2026, 7, 6, 9, 15, 0, 0, time.UTC)

// certPEM returns a self-signed certificate expiring at notAfter, PEM-encoded.
func certPEM(t *testing.T, notAfter time.Time) []byte {
	_, pemBytes := selfSigned(t, &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "system:node:wrk-b"},
		NotBefore:    notAfter.Add(-24 * time.Hour),
		NotAfter:     notAfter,
	})
	return pemBytes
}

// servingCertificate is a self-signed serving certificate for 127.0.0.1
// expiring at notAfter, and its PEM.
func servingCertificate(t *testing.T, notAfter time.Time) (tls.Certificate, []byte) {
	return selfSigned(t, &x509.Certificate{
		SerialNumber: big.NewInt(notAfter.Unix()), Subject: pkix.Name{CommonName: "kube-apiserver"},
		// A handshake checks validity against the wall clock.
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// selfSigned signs tmpl with a fresh key: the certificate, and its PEM.
func selfSigned(t *testing.T, tmpl *x509.Certificate) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

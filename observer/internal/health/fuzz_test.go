package health

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
)

// The /readyz?verbose body is the apiserver's, as a proxy may hand it on:
// whatever it holds, ParseReadyz either rejects it or gives a verdict,
// names each check no more than the body does, and never panics.
func FuzzParseReadyz(f *testing.F) {
	for _, seed := range []string{"ok", " ok\n", "", "readyz check passed", "readyz check failed",
		"[+]ping ok\n[+]etcd ok\nreadyz check passed\n",
		"[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n",
		"[+]etcd excluded: ok\nreadyz check passed", "[+]\n[-]\nreadyz check passed", "[+]a ok\n[+]a ok\nreadyz check passed",
		strings.Repeat("[+]x ok\n", 1000) + "readyz check passed"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseReadyz(body)
		if err != nil {
			return
		}
		if len(r.Checks) > strings.Count(string(body), "\n")+1 {
			t.Fatalf("%d checks from %d lines", len(r.Checks), strings.Count(string(body), "\n")+1)
		}
	})
}

// A CSR's certificate is whatever its signer wrote: certNotAfter reads the
// first certificate of any PEM, or gives the zero time, and never panics.
// Whatever follows a certificate does not change what is read of it.
func FuzzCertNotAfter(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	notAfter := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: notAfter.Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		f.Fatal(err)
	}
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	f.Add([]byte(""), false)
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), false)
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), true)
	f.Add([]byte("not pem at all"), true)
	f.Fuzz(func(t *testing.T, data []byte, after bool) {
		certNotAfter(data)
		if after {
			if got := certNotAfter(append(slices.Clone(cert), data...)); !got.Equal(notAfter) {
				t.Fatalf("a certificate followed by %q reads %s, want %s", data, got, notAfter)
			}
		}
	})
}

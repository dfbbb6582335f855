package health

import (
	"crypto/sha256"
	"crypto/x509"
	"maps"
	"slices"
	"time"
)

// The apiserver's serving certificate is read through the address the
// client uses, on most clusters the kubernetes Service: each probe may
// reach another member of an HA control plane, and each member has its own
// certificate, issued when it joined or last renewed. The last one read
// would make the expiry flip between members from beat to beat; the
// earliest of those seen lately is the one to renew first. A failed
// handshake (one member's certificate untrusted or expired, a dial that
// timed out) forgets nothing: what was read within the hour still stands,
// and after an hour of failures nothing does.

// servingMemory is how long a certificate not presented again still counts.
// At one probe a minute, a member of a three-member control plane goes
// unreached for an hour with odds of (2/3)^60, below one in 10^10.
const servingMemory = time.Hour

// maxServingCerts bounds what is remembered, whatever the apiserver
// presents.
const maxServingCerts = 16

type seenCert struct{ notAfter, seen time.Time }

// servingCerts are the serving certificates presented in the past
// servingMemory, by the SHA-256 of their DER.
type servingCerts map[[sha256.Size]byte]seenCert

// note records leaf as presented at now (nil: a probe that read none),
// then forgets what was last presented before now - servingMemory and,
// past maxServingCerts, the least recently presented.
func (s servingCerts) note(leaf *x509.Certificate, now time.Time) {
	if leaf != nil {
		s[sha256.Sum256(leaf.Raw)] = seenCert{notAfter: leaf.NotAfter, seen: now}
	}
	maps.DeleteFunc(s, func(_ [sha256.Size]byte, c seenCert) bool { return now.Sub(c.seen) > servingMemory })
	for len(s) > maxServingCerts {
		ids := slices.Collect(maps.Keys(s))
		oldest := slices.MinFunc(ids, func(a, b [sha256.Size]byte) int { return s[a].seen.Compare(s[b].seen) })
		delete(s, oldest)
	}
}

// earliest is the earliest expiry remembered; zero when none is.
func (s servingCerts) earliest() time.Time {
	var at time.Time
	for _, c := range s {
		if at.IsZero() || c.notAfter.Before(at) {
			at = c.notAfter
		}
	}
	return at
}

package health

import (
	"crypto/x509"
	"fmt"
	"testing"
	"time"
)

func member(name string, notAfter time.Time) *x509.Certificate {
	return &x509.Certificate{Raw: []byte(name), NotAfter: notAfter}
}

func TestServingCerts_ARenewedCertificateCountsUntilAnHourUnseen(t *testing.T) {
	s := servingCerts{}
	old, renewed := member("a", t0.Add(24*time.Hour)), member("a renewed", t0.Add(365*24*time.Hour))
	b := member("b", t0.Add(200*24*time.Hour))
	s.note(old, t0)
	s.note(b, t0.Add(time.Minute))
	s.note(renewed, t0.Add(2*time.Minute))
	if got := s.earliest(); !got.Equal(old.NotAfter) {
		t.Errorf("earliest = %v, want the old certificate's %v while it may still be served", got, old.NotAfter)
	}
	s.note(b, t0.Add(time.Hour)) // exactly an hour after the old one was last seen
	if got := s.earliest(); !got.Equal(old.NotAfter) {
		t.Errorf("an hour on, earliest = %v, want the old certificate's %v still", got, old.NotAfter)
	}
	s.note(b, t0.Add(time.Hour+time.Second))
	if got := s.earliest(); !got.Equal(b.NotAfter) {
		t.Errorf("past an hour unseen, earliest = %v, want b's %v", got, b.NotAfter)
	}
	if len(s) != 2 {
		t.Errorf("remembers %d certificates, want b and the renewed one", len(s))
	}
}

func TestServingCerts_RemembersAtMost16DroppingTheLeastRecentlySeen(t *testing.T) {
	s := servingCerts{}
	for i := range 20 {
		// The first four expire soonest: only dropping them moves the earliest.
		s.note(member(fmt.Sprint(i), t0.Add(time.Duration(i+1)*time.Hour)), t0.Add(time.Duration(i)*time.Second))
	}
	if len(s) != 16 {
		t.Fatalf("remembers %d certificates, want 16", len(s))
	}
	if want := t0.Add(5 * time.Hour); !s.earliest().Equal(want) {
		t.Errorf("earliest = %v, want %v: the four seen first are forgotten", s.earliest(), want)
	}
}

func TestServingCerts_NoneIsUnknown(t *testing.T) {
	if got := (servingCerts{}).earliest(); !got.IsZero() {
		t.Errorf("earliest of none = %v, want zero", got)
	}
}

func TestServingCerts_FailedReadsForgetOnlyWhatAnHourLeftUnseen(t *testing.T) {
	s := servingCerts{}
	a := member("a", t0.Add(24*time.Hour))
	s.note(a, t0)
	s.note(nil, t0.Add(time.Hour))
	if got := s.earliest(); !got.Equal(a.NotAfter) {
		t.Errorf("after failed reads for an hour, earliest = %v, want a's %v still", got, a.NotAfter)
	}
	s.note(nil, t0.Add(time.Hour+time.Second))
	if got := s.earliest(); !got.IsZero() {
		t.Errorf("after failed reads for over an hour, earliest = %v, want unknown", got)
	}
}

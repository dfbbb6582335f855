package cluster

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// An apiserver that does not answer at start is asked again every 10 s,
// not left for 5 minutes, and the beat hears of the version once it
// answers; after that it is asked every 5 minutes, and a version that did
// not change is no news (docs/contract.md#g-13).
func TestVersion_RetriesEveryTenSecondsUntilTheFirstAnswerThenEveryFiveMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &versionServer{start: time.Now(), answers: []string{"", "", `{"gitVersion":"v1.37.2"}`}}
		var notified []time.Duration
		v := NewVersion(s.client(), VersionOptions{Notify: func() { notified = append(notified, time.Since(s.start)) }})
		if v.Refresh(t.Context()) {
			t.Fatal("the first read answered 503 but counted as known")
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { v.Run(ctx); close(done) }()
		time.Sleep(10*time.Minute + 30*time.Second)
		cancel()
		<-done

		want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 20*time.Second + 5*time.Minute, 20*time.Second + 10*time.Minute}
		if !slices.Equal(s.reads, want) {
			t.Errorf("reads at %v, want %v", s.reads, want)
		}
		if got := v.Get(); got != "v1.37.2" {
			t.Errorf("version %q, want v1.37.2", got)
		}
		if want := []time.Duration{20 * time.Second}; !slices.Equal(notified, want) {
			t.Errorf("notified at %v, want once, at %v", notified, want)
		}
	})
}

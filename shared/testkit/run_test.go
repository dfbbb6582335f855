package testkit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestRunning_StopWaitsForRunAndIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := Start(t, time.Minute, func(ctx context.Context) error {
			<-ctx.Done()
			<-release
			return nil
		})
		r.Cancel()
		synctest.Wait()
		if r.Returned() {
			t.Fatal("Returned before run did")
		}
		close(release)
		r.Stop()
		if !r.Returned() {
			t.Error("Stop came back before run returned")
		}
		r.Stop()
	})
}

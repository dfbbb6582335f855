package clustersim

import (
	"context"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
)

// startWorld starts the real controllers and a simulator on a fresh cloud,
// and stops both when the test ends.
func startWorld(t *testing.T) *World {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w, err := StartWorld(ctx, env, t.TempDir(), Options{JoinDelay: 300 * time.Millisecond}, kube.ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(w.Controllers.PostMortem())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := w.Close(ctx, env); err != nil {
			t.Error(err)
		}
	})
	return w
}

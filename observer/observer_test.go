package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/connect"
	"kubehz.dev/agent/shared/kubeapi"
)

// The first beat after a start must not tell the platform to clear the
// actor's reports, the machine issues and pools, or the inventory: the beat
// loop waits for the first read of each (docs/contract.md#cadence), and
// beat's TestLoop_FirstBeatWaits… pins the wait itself.
func TestNewObserver_FirstReadsAreTheReportsMachinesAndInventory(t *testing.T) {
	restCfg := &rest.Config{Host: "https://127.0.0.1:1"} // never dialled: nothing runs
	api, err := kubeapi.New(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	cfg := settings{FullInterval: time.Minute, Debounce: 10 * time.Second, MinGap: 15 * time.Second}
	o := newObserver(cfg, log, connect.Clients{Rest: restCfg, API: api, Dynamic: dyn}, filepath.Join(dir, "alive"),
		newStateFile(filepath.Join(dir, "state"), time.Now(), "test", time.Minute, log))

	if o.loop.FirstReadsLimit != 10*time.Second {
		t.Errorf("the first beat waits up to %s for them, want 10s", o.loop.FirstReadsLimit)
	}
	want := []any{o.actions, o.machines, o.inventory}
	if len(o.loop.FirstReads) != len(want) {
		t.Fatalf("the first beat waits for %d sources, want the reports, the machines and the inventory", len(o.loop.FirstReads))
	}
	for i, s := range o.loop.FirstReads {
		if s != want[i] {
			t.Errorf("first read %d is %T, want %T", i, s, want[i])
		}
	}
}

package main

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeapi"
)

// The first beat after a start must not tell the platform to clear the
// actor's reports, the machine issues and pools, or the inventory: it waits
// for the first read of each (docs/contract.md#cadence).
func TestNewObserver_FirstBeatWaitsForReportsMachinesAndInventory(t *testing.T) {
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
	cfg := config.Observer{FullInterval: time.Minute, Debounce: 10 * time.Second, MinGap: 15 * time.Second}
	o := newObserver(cfg, log, api, dyn, restCfg, nil, filepath.Join(dir, "alive"),
		newStateFile(filepath.Join(dir, "state"), time.Now(), "test", time.Minute, log))

	if firstReadsLimit != 10*time.Second {
		t.Errorf("the first beat waits up to %s for them, want 10s", firstReadsLimit)
	}
	want := []any{o.actions, o.machines, o.inventory}
	if len(o.firstReads) != len(want) {
		t.Fatalf("the first beat waits for %d sources, want the reports, the machines and the inventory", len(o.firstReads))
	}
	for i, s := range o.firstReads {
		if s != want[i] {
			t.Errorf("first read %d is %T, want %T", i, s, want[i])
		}
	}
}

type syncedAt struct {
	at time.Time // zero: never
}

func (s *syncedAt) HasSynced() bool { return !s.at.IsZero() && !time.Now().Before(s.at) }

func TestWaitSynced_WaitsForTheLastSourceUpToTheLimitOrTheCancel(t *testing.T) {
	tests := []struct {
		name     string
		syncs    []time.Duration // after the start; 0 never
		cancelAt time.Duration   // 0: never
		want     time.Duration
	}{
		{name: "all synced already", syncs: []time.Duration{time.Nanosecond, time.Nanosecond}, want: 0},
		{name: "the last of three", syncs: []time.Duration{time.Second, 3 * time.Second, 2 * time.Second}, want: 3 * time.Second},
		{name: "one never syncs: the 10 s limit", syncs: []time.Duration{time.Second, 0}, want: 10 * time.Second},
		{name: "cancelled while waiting", syncs: []time.Duration{0}, cancelAt: 2 * time.Second, want: 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var sources []interface{ HasSynced() bool }
				for _, d := range tt.syncs {
					s := &syncedAt{}
					if d > 0 {
						s.at = start.Add(d)
					}
					sources = append(sources, s)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.cancelAt > 0 {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				waitSynced(ctx, sources, 10*time.Second)
				// The wait polls every 20 ms: it returns within one poll.
				if got := time.Since(start); got < tt.want || got > tt.want+20*time.Millisecond {
					t.Errorf("returned after %s, want %s", got, tt.want)
				}
			})
		})
	}
}

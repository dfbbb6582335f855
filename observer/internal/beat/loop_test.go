package beat

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"kubehz.dev/agent/shared/testkit"
)

func TestLoop_ColdStartBeatsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startLoop(t, nil)
		want := seconds(0)
		if got := h.record(); !slices.Equal(got.queued, want) || !slices.Equal(got.hooked, want) {
			t.Errorf("after start: queued %v, hooked %v; want one beat at +0s", got.queued, got.hooked)
		}
	})
}

// Each case starts right after the cold-start beat at +0 s.
func TestLoop_BeatSchedule(t *testing.T) {
	tests := []struct {
		name    string
		changes []time.Duration
		end     time.Duration
		want    []time.Duration
	}{
		{
			name: "no change beats every full interval from the last push",
			end:  180 * time.Second,
			want: seconds(0, 60, 120, 180),
		},
		{
			name:    "change right after a push waits for the min-gap",
			changes: seconds(2),
			end:     90 * time.Second,
			want:    seconds(0, 15, 75),
		},
		{
			name:    "recent change waits for its debounce after the min-gap has passed",
			changes: seconds(18),
			end:     90 * time.Second,
			want:    seconds(0, 28, 88),
		},
		{
			name:    "burst is anchored on its first change, not restarted by later ones",
			changes: seconds(30, 32, 35, 38, 39),
			end:     100 * time.Second,
			want:    seconds(0, 40, 100),
		},
		{
			name:    "change just before the full interval rides on the periodic beat",
			changes: seconds(59),
			end:     130 * time.Second,
			want:    seconds(0, 60, 120),
		},
		{
			name:    "periodic beat clears a pending change so the next one is debounced afresh",
			changes: seconds(59, 70),
			end:     140 * time.Second,
			want:    seconds(0, 60, 80, 140),
		},
		{
			name:    "steady stream of changes beats every min-gap and is never starved",
			changes: seconds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45),
			end:     46 * time.Second,
			want:    seconds(0, 15, 30, 45),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startLoop(t, nil)
				h.runUntil(tt.end, tt.changes)
				got := h.record()
				if !slices.Equal(got.queued, tt.want) {
					t.Errorf("beats at %v, want %v", got.queued, tt.want)
				}
				if !slices.Equal(got.hooked, got.queued) || !slices.Equal(got.builds, got.queued) {
					t.Errorf("built %v, hooked %v, queued %v; want one build and one hook per beat",
						got.builds, got.hooked, got.queued)
				}
			})
		})
	}
}

// The beat goes out at its deadline to the nanosecond: not one tick early,
// not one tick late.
func TestLoop_BeatsExactlyAtDeadline(t *testing.T) {
	tests := []struct {
		name     string
		changeAt time.Duration // zero: no change
		due      time.Duration
	}{
		{"full interval", 0, 60 * time.Second},
		{"min-gap", 2 * time.Second, 15 * time.Second},
		{"debounce", 18 * time.Second, 28 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startLoop(t, nil)
				if tt.changeAt > 0 {
					h.step(tt.changeAt)
					h.change()
				}
				h.step(tt.due - tt.changeAt - time.Nanosecond)
				if got := h.record().queued; len(got) != 1 {
					t.Fatalf("1 ns before the deadline: beats at %v, want only the cold start", got)
				}
				h.step(time.Nanosecond)
				if got, want := h.record().queued, []time.Duration{0, tt.due}; !slices.Equal(got, want) {
					t.Errorf("at the deadline: beats at %v, want %v", got, want)
				}
			})
		})
	}
}

// A snapshot that cannot be built is logged and skipped; the loop counts it
// as a push, so the next attempt follows the ordinary rhythm from there.
func TestLoop_BuildErrorSkipsBeatAndKeepsGoing(t *testing.T) {
	tests := []struct {
		name       string
		failCall   int
		changes    []time.Duration
		end        time.Duration
		wantBuilds []time.Duration
		wantBeats  []time.Duration
		wantReason string
	}{
		{
			name:       "cold start",
			failCall:   1,
			end:        60 * time.Second,
			wantBuilds: seconds(0, 60),
			wantBeats:  seconds(60),
			wantReason: ReasonColdStart,
		},
		{
			name:       "change beat",
			failCall:   2,
			changes:    seconds(2),
			end:        75 * time.Second,
			wantBuilds: seconds(0, 15, 75),
			wantBeats:  seconds(0, 75),
			wantReason: ReasonChange,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startLoop(t, func(call int) bool { return call == tt.failCall })
				h.runUntil(tt.end, tt.changes)
				got := h.record()
				if !slices.Equal(got.builds, tt.wantBuilds) || !slices.Equal(got.queued, tt.wantBeats) {
					t.Errorf("built at %v, queued at %v; want built at %v, queued at %v",
						got.builds, got.queued, tt.wantBuilds, tt.wantBeats)
				}
				if !slices.Equal(got.hooked, got.queued) {
					t.Errorf("hooked at %v, want only the queued beats %v", got.hooked, got.queued)
				}

				line := strings.TrimSpace(h.logs.String())
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatalf("want one JSON log line, got %q: %v", line, err)
				}
				want := map[string]any{"level": "ERROR", "err": errBuild.Error(), "reason": tt.wantReason}
				for k, v := range want {
					if rec[k] != v {
						t.Errorf("log %s = %v, want %v", k, rec[k], v)
					}
				}
			})
		})
	}
}

func TestLoop_RunReturnsPromptlyOnCancel(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *loopHarness)
	}{
		{"waiting for the next periodic beat", func(*loopHarness) {}},
		{"waiting out a debounce", func(h *loopHarness) {
			h.step(30 * time.Second)
			h.change()
		}},
		{"change signal not yet read", func(h *loopHarness) {
			h.changed <- struct{}{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startLoop(t, nil)
				tt.setup(h)
				h.stop()
				if got := h.record().queued; len(got) != 1 {
					t.Errorf("beats at %v, want only the cold start", got)
				}
			})
		})
	}
}

// The real clock in a synctest bubble: the cold-start beat needs nothing to
// fire it, and stopping and re-arming a real timer keeps the schedule. Beat
// is left nil, as a caller without a liveness probe would.
func TestLoop_RealClockKeepsSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changed := make(chan struct{}, 1)
		loop, beats := realClockLoop(changed)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- loop.Run(ctx) }()

		time.Sleep(2 * time.Second)
		changed <- struct{}{}
		time.Sleep(100 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}

		if want := seconds(0, 15, 75); !slices.Equal(beats(), want) {
			t.Errorf("beats at %v, want %v", beats(), want)
		}
	})
}

// TestLoop_StandsDownWhileNotOwnerAndResumesOnFlip: while the marker says the
// CronJob owns the heartbeat, a due beat is neither built nor queued and any
// pending payload is dropped; the flip back is a change, so the next beat
// follows within the debounce instead of a full interval.
func TestLoop_StandsDownWhileNotOwnerAndResumesOnFlip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startLoop(t, nil) // beat at 0
		h.standDown.Store(true)
		h.runUntil(65*time.Second, nil) // the periodic beat at 60 is skipped
		h.mu.Lock()
		builds, discards, turns := slices.Clone(h.builds), slices.Clone(h.discards), h.turns
		h.mu.Unlock()
		if want := []time.Duration{0}; !slices.Equal(builds, want) {
			t.Fatalf("builds while standing down = %v, want only the cold start %v", builds, want)
		}
		if want := []time.Duration{60 * time.Second}; !slices.Equal(discards, want) {
			t.Fatalf("discards = %v, want %v", discards, want)
		}
		if turns < 2 {
			t.Fatalf("the loop turned %d times; the liveness hook must see every turn", turns)
		}

		h.standDown.Store(false)
		h.change() // the marker's watcher signals the flip at 65
		h.runUntil(80*time.Second, nil)
		h.mu.Lock()
		queued := slices.Clone(h.queued)
		h.mu.Unlock()
		// Change at 65: debounce to 75, min-gap from the skipped 60 to 75.
		if want := []time.Duration{0, 75 * time.Second}; !slices.Equal(queued, want) {
			t.Fatalf("queued = %v, want %v", queued, want)
		}
	})
}

func TestLoop_FirstBeatWaitsForTheFirstReadsUpToTheLimit(t *testing.T) {
	tests := []struct {
		name      string
		syncs     []time.Duration // each first read's end; negative: never
		wantFirst time.Duration
		wantWarn  bool
	}{
		{name: "synced at start", syncs: seconds(0, 0), wantFirst: 0},
		{name: "the last of three", syncs: seconds(1, 3, 2), wantFirst: 3 * time.Second},
		{name: "one never syncs: the 10 s limit", syncs: []time.Duration{time.Second, -1}, wantFirst: 10 * time.Second, wantWarn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := startLoopAfter(t, nil, tt.syncs)
				var changes []time.Duration
				if tt.wantFirst > 2*time.Second {
					// Changes the caches signal while the first reads run
					// are in the first beat's snapshot, not a reason for
					// another beat.
					h.change()
					changes = seconds(2)
				}
				h.runUntil(tt.wantFirst, changes)
				h.step(0) // a fake timer due now fires on a step, as at the cold start
				want := []time.Duration{tt.wantFirst}
				if got := h.record(); !slices.Equal(got.builds, want) {
					t.Fatalf("built %v, want one beat at +%s", got.builds, tt.wantFirst)
				}
				h.runUntil(tt.wantFirst+time.Minute, nil)
				if got := h.record(); !slices.Equal(got.builds, append(want, tt.wantFirst+time.Minute)) {
					t.Errorf("built %v, want the next beat a full interval after the first", got.builds)
				}
				warned := strings.Contains(h.logs.String(), "First beat without every first read")
				if warned != tt.wantWarn {
					t.Errorf("warned %v, want %v; logs:\n%s", warned, tt.wantWarn, h.logs.String())
				}
				if tt.wantWarn && !strings.Contains(h.logs.String(), "syncedAfter") {
					t.Errorf("the warning does not name the source still reading: %s", h.logs.String())
				}
			})
		})
	}
}

func TestLoop_CancelWhileWaitingForTheFirstReadsBeatsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startLoopAfter(t, nil, []time.Duration{-1})
		h.runUntil(5*time.Second, nil)
		h.stop() // also checks Run leaves no timer behind
		if got := h.record(); len(got.builds) != 0 {
			t.Errorf("built %v before the first reads ended or the limit passed", got.builds)
		}
	})
}

// On a real clock the first beat's timer is ready the moment the wait ends,
// so a wait that ended on the cancel as if the reads were done would race
// the cancel and beat about half the time. 20 runs make that race show.
func TestLoop_CancelWhileWaitingForTheFirstReadsBeatsNothingOnARealClock(t *testing.T) {
	for i := range 20 {
		synctest.Test(t, func(t *testing.T) {
			loop, beats := realClockLoop(make(chan struct{}, 1))
			loop.FirstReads = []interface{ HasSynced() bool }{neverSynced{}}
			loop.FirstReadsLimit = 10 * time.Second
			run := testkit.Start(t, patience, loop.Run)
			time.Sleep(5 * time.Second)
			synctest.Wait()
			run.Stop()
			if got := beats(); len(got) != 0 {
				t.Errorf("run %d: beats at %v after a cancel during the wait", i, got)
			}
		})
	}
}

// A change the caches signalled before the first beat is in its snapshot.
// On a real clock the first beat's timer and that signal are ready at once,
// and select may pick either, so the test runs 20 times: without the drain,
// 10 test runs out of 10 showed a redundant change beat at +15 s.
func TestLoop_AChangeBeforeTheFirstBeatIsNoReasonForASecond(t *testing.T) {
	for i := range 20 {
		synctest.Test(t, func(t *testing.T) {
			changed := make(chan struct{}, 1)
			changed <- struct{}{} // the initial lists
			loop, beats := realClockLoop(changed)
			run := testkit.Start(t, patience, loop.Run)
			time.Sleep(70 * time.Second)
			synctest.Wait()
			run.Stop()
			if want := seconds(0, 60); !slices.Equal(beats(), want) {
				t.Errorf("run %d: beats at %v, want %v", i, beats(), want)
			}
		})
	}
}

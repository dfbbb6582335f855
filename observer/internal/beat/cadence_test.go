package beat

import (
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	// Defaults from the contract: full 60 s, debounce 10 s, min-gap 15 s.
	c := Cadence{Full: 60 * time.Second, Debounce: 10 * time.Second, MinGap: 15 * time.Second}
	t0 := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	at := t0.Add
	const s = time.Second

	tests := []struct {
		name  string
		state State
		now   time.Time
		want  Decision
	}{
		{
			name: "cold start pushes",
			now:  t0,
			want: Decision{Push: true, Wait: 60 * s, Reason: ReasonColdStart},
		},
		{
			name:  "cold start pushes even while dirty",
			state: State{FirstDirty: at(-1 * s)},
			now:   t0,
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonColdStart},
		},
		{
			name:  "clean right after a push waits 55 s",
			state: State{LastPush: t0},
			now:   at(5 * s),
			want:  Decision{Wait: 55 * s, Reason: ReasonPeriodic},
		},
		{
			name:  "a change right after a push waits for the min-gap (12 s)",
			state: State{LastPush: t0, FirstDirty: at(2 * s)},
			now:   at(3 * s),
			want:  Decision{Wait: 12 * s, Reason: ReasonChange},
		},
		{
			name:  "a settled change pushes",
			state: State{LastPush: t0, FirstDirty: at(20 * s)},
			now:   at(30 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonChange},
		},
		{
			name:  "a recent change waits for its debounce (8 s)",
			state: State{LastPush: t0, FirstDirty: at(18 * s)},
			now:   at(20 * s),
			want:  Decision{Wait: 8 * s, Reason: ReasonChange},
		},
		{
			name:  "an elapsed full interval pushes periodic",
			state: State{LastPush: t0},
			now:   at(61 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonPeriodic},
		},
		{
			name:  "a burst is anchored on its first change",
			state: State{LastPush: t0, FirstDirty: at(1 * s)},
			now:   at(30 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonChange},
		},
		{
			name:  "periodic due exactly now pushes",
			state: State{LastPush: t0},
			now:   at(60 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonPeriodic},
		},
		{
			name:  "periodic due in 1 ns waits the 1 ms floor",
			state: State{LastPush: t0},
			now:   at(60*s - 1),
			want:  Decision{Wait: time.Millisecond, Reason: ReasonPeriodic},
		},
		{
			name:  "change due exactly now at the min-gap edge pushes",
			state: State{LastPush: t0, FirstDirty: at(5 * s)},
			now:   at(15 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonChange},
		},
		{
			name:  "change due exactly now at the debounce edge pushes",
			state: State{LastPush: t0, FirstDirty: at(20 * s)},
			now:   at(30 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonChange},
		},
		{
			name:  "change due in 1 ns waits the 1 ms floor",
			state: State{LastPush: t0, FirstDirty: at(20 * s)},
			now:   at(30*s - 1),
			want:  Decision{Wait: time.Millisecond, Reason: ReasonChange},
		},
		{
			name:  "a change pending past the periodic deadline waits for periodic",
			state: State{LastPush: t0, FirstDirty: at(55 * s)},
			now:   at(58 * s),
			want:  Decision{Wait: 2 * s, Reason: ReasonPeriodic},
		},
		{
			name:  "the periodic deadline pushes before a pending change settles",
			state: State{LastPush: t0, FirstDirty: at(55 * s)},
			now:   at(60 * s),
			want:  Decision{Push: true, Wait: 60 * s, Reason: ReasonPeriodic},
		},
		{
			name:  "a clock stepped back before the last push waits the min-gap",
			state: State{LastPush: t0, FirstDirty: at(-30 * s)},
			now:   at(-1 * s),
			want:  Decision{Wait: 16 * s, Reason: ReasonChange},
		},
		{
			name:  "a clock stepped back ten minutes still turns within the full interval",
			state: State{LastPush: t0},
			now:   at(-10 * 60 * s),
			want:  Decision{Wait: 60 * s, Reason: ReasonPeriodic},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.state, c, tt.now); got != tt.want {
				t.Errorf("Decide() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// A min-gap longer than the full interval delays the beat, but not the
// loop's turns: the liveness probe fails after three full intervals without
// one, so a 55 s sleep under a 5 s full interval would restart a healthy
// observer.
func TestDecide_AMinGapPastTheFullIntervalStillTurnsEveryInterval(t *testing.T) {
	c := Cadence{Full: 5 * time.Second, Debounce: 10 * time.Second, MinGap: 60 * time.Second}
	t0 := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	const s = time.Second
	now := t0
	st := State{LastPush: t0}
	for now.Before(t0.Add(60 * s)) {
		d := Decide(st, c, now)
		if d.Push {
			t.Fatalf("pushed at +%s, before the 60 s min-gap", now.Sub(t0))
		}
		if d.Wait != 5*s {
			t.Fatalf("at +%s waits %s, want the 5 s full interval", now.Sub(t0), d.Wait)
		}
		now = now.Add(d.Wait)
	}
	if d := Decide(st, c, now); d != (Decision{Push: true, Wait: 5 * s, Reason: ReasonPeriodic}) {
		t.Fatalf("at the min-gap: %+v, want a periodic push", d)
	}
}

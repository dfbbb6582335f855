package actions

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

// t0 is the fixed "now" of the pure tests and the fake clock's start.
var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

const (
	holderA = "actor-7d9f-abcde_3f2a"
	holderB = "actor-7d9f-fghij_9c1b"
)

var twoActions = []wire.Action{
	{Type: wire.ActionScale, Target: "pool-a", Status: wire.StatusDone, Detail: "replicas 2 to 3", Revision: 7},
	{Type: wire.ActionHeal, Target: "wrk-b", Status: wire.StatusPending, Revision: 7},
}

func reportBy(holder string, actions ...wire.Action) report.Document {
	return report.Document{Revision: 7, Holder: holder, UpdatedAt: t0, Actions: actions}
}

func TestFold(t *testing.T) {
	fresh := &Lease{Holder: holderA, RenewTime: t0.Add(-5 * time.Second), Duration: 15 * time.Second}
	cases := []struct {
		name  string
		doc   report.Document
		lease *Lease
		now   time.Time
		want  []wire.Action
	}{
		{name: "no lease", doc: reportBy(holderA, twoActions...), now: t0},
		{
			name:  "lease without a holder, as a released one",
			doc:   reportBy(holderA, twoActions...),
			lease: &Lease{RenewTime: t0, Duration: time.Second}, now: t0,
		},
		{
			name:  "lease never renewed",
			doc:   reportBy(holderA, twoActions...),
			lease: &Lease{Holder: holderA, Duration: 15 * time.Second}, now: t0,
		},
		{
			name:  "lease without a duration",
			doc:   reportBy(holderA, twoActions...),
			lease: &Lease{Holder: holderA, RenewTime: t0}, now: t0,
		},
		{name: "fresh lease", doc: reportBy(holderA, twoActions...), lease: fresh, now: t0, want: twoActions},
		{
			name: "one nanosecond before expiry is live", doc: reportBy(holderA, twoActions...), lease: fresh,
			now: t0.Add(10*time.Second - time.Nanosecond), want: twoActions,
		},
		{name: "exactly at expiry is lapsed", doc: reportBy(holderA, twoActions...), lease: fresh, now: t0.Add(10 * time.Second)},
		{name: "past expiry", doc: reportBy(holderA, twoActions...), lease: fresh, now: t0.Add(time.Hour)},
		{
			name: "renewed in the observer's future (clock skew) is live", doc: reportBy(holderA, twoActions...),
			lease: &Lease{Holder: holderA, RenewTime: t0.Add(3 * time.Second), Duration: 15 * time.Second},
			now:   t0, want: twoActions,
		},
		{name: "live lease, empty report", doc: reportBy(holderA), lease: fresh, now: t0},
		{name: "live lease, no report at all", lease: fresh, now: t0},
		{name: "holder mismatch: a previous leader's report is withheld", doc: reportBy(holderB, twoActions...), lease: fresh, now: t0},
		{name: "report names no holder", doc: reportBy("", twoActions...), lease: fresh, now: t0},
		{
			name: "long lease holder matches the report's clamped copy", now: t0, want: twoActions,
			doc:   reportBy(strings.Repeat("h", 300)[:253], twoActions...),
			lease: &Lease{Holder: strings.Repeat("h", 300), RenewTime: t0, Duration: 15 * time.Second},
		},
		{
			name: "holder mismatch with a lapsed lease", doc: reportBy(holderB, twoActions...), lease: fresh,
			now: t0.Add(10 * time.Second),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Fold(tc.doc, tc.lease, tc.now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFold_ReturnsACopy(t *testing.T) {
	doc := reportBy(holderA, twoActions...)
	got := Fold(doc, &Lease{Holder: holderA, RenewTime: t0, Duration: time.Minute}, t0)
	got[0].Status = wire.StatusFailed
	if doc.Actions[0].Status != wire.StatusDone {
		t.Fatal("Fold handed out the cached slice")
	}
}

func TestMismatch(t *testing.T) {
	long := strings.Repeat("h", 300)
	cases := []struct {
		name  string
		doc   report.Document
		lease *Lease
		want  bool
	}{
		{name: "same holder", doc: reportBy(holderA), lease: &Lease{Holder: holderA}},
		{name: "another holder", doc: reportBy(holderB), lease: &Lease{Holder: holderA}, want: true},
		{name: "no lease", doc: reportBy(holderB)},
		{name: "released lease", doc: reportBy(holderB), lease: &Lease{}},
		{name: "report names no holder", doc: reportBy(""), lease: &Lease{Holder: holderA}},
		{name: "long holder compared as clamped", doc: reportBy(long[:253]), lease: &Lease{Holder: long}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Mismatch(tc.doc, tc.lease); got != tc.want {
				t.Fatalf("Mismatch = %v, want %v", got, tc.want)
			}
		})
	}
}

package heal

import (
	"fmt"
	"testing"
	"time"
	"unicode/utf16"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/shared/wire"
)

// noLimits never bind: maxUnhealthy cannot exceed 1000, and no floor is
// above the contract's own.
var noLimits = Limits{MaxInFlight: 1000}

// shipped are deploy/actor's defaults, written out.
var shipped = Limits{MaxInFlight: 3, MinCooldown: 600 * time.Second,
	MinStartupTimeout: 600 * time.Second, MinUnhealthyAfter: 300 * time.Second}

const limitedPrefix = "refusing more than this cluster's local limits (deploy/actor KUBEHZ_HEAL_*); using "

func TestHeal_LocalLimitsOnlyEverTightenThePolicy(t *testing.T) {
	tests := []struct {
		name string
		h    desired.Healing
		want Policy
	}{
		{
			name: "every brake off at the contract's bounds gets every local limit, and says so",
			h:    desired.Healing{Enabled: true, MaxUnhealthy: 1000, UnhealthyAfterSeconds: 60, NodeStartupTimeoutSeconds: 60},
			want: Policy{MaxUnhealthy: 3, Cooldown: 600 * time.Second, StartupTimeout: 600 * time.Second,
				UnhealthyAfter: 300 * time.Second, Revision: 9,
				Limited: limitedPrefix + "maxUnhealthy 3 (asked 1000), cooldownSeconds 600 (asked 0), " +
					"nodeStartupTimeoutSeconds 600 (asked 60), unhealthyAfterSeconds 300 (asked 60)"},
		},
		{
			name: "zeros are floored by the local limits above the contract's 60 s",
			h:    desired.Healing{MaxUnhealthy: 4},
			want: Policy{MaxUnhealthy: 3, Cooldown: 600 * time.Second, StartupTimeout: 600 * time.Second,
				UnhealthyAfter: 300 * time.Second, Revision: 9,
				Limited: limitedPrefix + "maxUnhealthy 3 (asked 4), cooldownSeconds 600 (asked 0), " +
					"nodeStartupTimeoutSeconds 600 (asked 0), unhealthyAfterSeconds 300 (asked 0)"},
		},
		{
			name: "exactly at every limit is the document's own policy, not reported",
			h:    desired.Healing{MaxUnhealthy: 3, CooldownSeconds: 600, NodeStartupTimeoutSeconds: 600, UnhealthyAfterSeconds: 300},
			want: Policy{MaxUnhealthy: 3, Cooldown: 600 * time.Second, StartupTimeout: 600 * time.Second,
				UnhealthyAfter: 300 * time.Second, Revision: 9},
		},
		{
			name: "stricter than every limit passes through",
			h:    desired.Healing{MaxUnhealthy: 1, CooldownSeconds: 900, NodeStartupTimeoutSeconds: 1200, UnhealthyAfterSeconds: 301},
			want: Policy{MaxUnhealthy: 1, Cooldown: 900 * time.Second, StartupTimeout: 1200 * time.Second,
				UnhealthyAfter: 301 * time.Second, Revision: 9},
		},
		{
			name: "one limit past: only it is named",
			h:    desired.Healing{MaxUnhealthy: 0, CooldownSeconds: 599, NodeStartupTimeoutSeconds: 600, UnhealthyAfterSeconds: 300},
			want: Policy{MaxUnhealthy: 0, Cooldown: 600 * time.Second, StartupTimeout: 600 * time.Second,
				UnhealthyAfter: 300 * time.Second, Revision: 9, Limited: limitedPrefix + "cooldownSeconds 600 (asked 599)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same(t, "policy", PolicyFrom(tt.h, 9, shipped), tt.want)
		})
	}
}

// A local maximum of 0 rules healing's deletes out: every candidate trips
// the storm brake, whatever the document says.
func TestHeal_LocalMaximumOfZeroDeletesNothing(t *testing.T) {
	p := PolicyFrom(desired.Healing{Enabled: true, MaxUnhealthy: 1000}, testRev, Limits{MaxInFlight: 0})
	p.Named = named
	o := Observed{Machines: []Machine{machine("m1", "workers", "n1")}, Nodes: nodesOf(notReady("n1", now.Add(-time.Hour))),
		MDs: workerPools("workers")}
	d := Decide(o, p, oldMemory(), now)
	if !d.Storm || deletes(d) != 0 {
		t.Errorf("decision %s, want a storm deleting nothing", decisionString(d))
	}
	if d.Limited == nil || d.Limited.Target != "healing policy" || d.Limited.Status != wire.StatusFailed || !d.Keep["healing policy"] {
		t.Errorf("limits report %+v (kept %v), want a failed report on the healing policy", d.Limited, d.Keep["healing policy"])
	}
}

// The report fits the wire's 256-unit detail whatever the document asks:
// every limit past, with the longest numbers validation lets through.
func TestHeal_LimitsReportFitsTheWire(t *testing.T) {
	l := Limits{MaxInFlight: 999, MinCooldown: 86400 * time.Second, MinStartupTimeout: 86400 * time.Second,
		MinUnhealthyAfter: 86400 * time.Second}
	h := desired.Healing{MaxUnhealthy: 1000, CooldownSeconds: 86399, NodeStartupTimeoutSeconds: 86399, UnhealthyAfterSeconds: 86399}
	p := PolicyFrom(h, testRev, l)
	if n := len(utf16.Encode([]rune(p.Limited))); n == 0 || n > 256 {
		t.Errorf("report is %d UTF-16 units, want 1..256: %q", n, p.Limited)
	}
}

func deletes(d Decision) int {
	n := 0
	for _, s := range d.Steps {
		if s.Delete != nil {
			n++
		}
	}
	return n
}

// Healing acts in the first 100 of the document's pools after sorting by
// name, whatever their order; a name given twice takes two of the places.
func TestNamedPools_TheFirstHundredByName(t *testing.T) {
	var pools []desired.Pool
	for i := 149; i >= 0; i-- {
		pools = append(pools, desired.Pool{Name: fmt.Sprintf("p%03d", i)})
	}
	named := NamedPools(pools)
	if n := taken(named); n != 100 || !named["p000"] || !named["p099"] || named["p100"] || len(named) != 150 {
		t.Errorf("%d of %d pools taken, p000 %v, p099 %v, p100 %v; want p000 to p099 of 150", n, len(named), named["p000"], named["p099"], named["p100"])
	}
	named = NamedPools(append(pools, desired.Pool{Name: "p000"}))
	if n := taken(named); n != 99 || !named["p098"] || named["p099"] {
		t.Errorf("with p000 named twice: %d pools taken, p098 %v, p099 %v; want p000 to p098", n, named["p098"], named["p099"])
	}
}

// taken counts the pools NamedPools lets the actor act on.
func taken(named map[string]bool) int {
	n := 0
	for _, ok := range named {
		if ok {
			n++
		}
	}
	return n
}

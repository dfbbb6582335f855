package execute

import (
	"context"
	"fmt"
	"strings"

	"kubehz.dev/agent/actor/internal/heal"
	"kubehz.dev/agent/shared/wire"
)

// stormTarget is the key news remembers a storm under: no Machine's name,
// as it holds a space.
const stormTarget = "storm brake"

// stormEvent records one Event for a storm whose refusal is news: the storm
// began, or its count changed. The refusal's text names the count, so each
// change makes every candidate's report new; one Event per candidate would
// be thousands of writes in a zone outage. The per-candidate reports still
// ride the beat. The Event goes on the first held-back Machine by name and
// names the others (Events live in the MD namespace, where RBAC lets the
// actor write them, and are about one object).
func (e *Executor) stormEvent(ctx context.Context, d heal.Decision, o heal.Observed) {
	var held []string
	var refusal wire.Action
	for _, st := range d.Steps {
		if st.Action.Status != wire.StatusFailed {
			continue
		}
		if held == nil {
			refusal = st.Action
		}
		held = append(held, st.Action.Target)
	}
	if held == nil {
		return // only Machine-less nodes are down: no Machine to record it on
	}
	if !e.news(wire.Action{Type: wire.ActionHeal, Target: stormTarget, Detail: refusal.Detail}) {
		return // this storm, at this count, was already recorded
	}
	a := refusal
	a.Detail = fmt.Sprintf("%s; holding back %d Machine(s): %s", refusal.Detail, len(held), strings.Join(held, ", "))
	e.machineEvent(ctx, o, a, true, "KubehzStormBrake")
}

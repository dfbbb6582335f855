package scale

import (
	"kubehz.dev/agent/shared/wire"
)

// fakeAPI records the patches a pass sends and answers each MD with the
// error configured for it.
type fakeAPI struct {
	errs    map[string]error
	patches []Patch
}

func (f *fakeAPI) patch(p Patch) error {
	f.patches = append(f.patches, p)
	return f.errs[p.MD]
}

// execute plays the executor around the pure decision: each step's report is
// stored, its patch sent, the outcome stored, and after a halt every later
// pool is queued. It returns the last report per pool in order, and whether
// the pass asks for a retry.
func execute(steps []Step, api *fakeAPI) ([]wire.Action, bool) {
	var final, outcomes []wire.Action
	halted := false
	for _, s := range steps {
		if halted {
			q := Queued(s.Action.Target, s.Action.Revision)
			final = append(final, q)
			outcomes = append(outcomes, q)
			continue
		}
		if s.Patch == nil {
			final = append(final, s.Action)
			continue
		}
		a, halt := Outcome(s, api.patch(*s.Patch))
		final = append(final, a)
		outcomes = append(outcomes, a)
		halted = halted || halt
	}
	return final, Retry(steps, outcomes)
}

package upgrade

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
// stored, its patch sent, a success recorded with Started, and after a halt
// every later pool is queued. It returns the last report per pool in order,
// and the plan's retry.
func execute(o Observed, p Policy, mem RolledFrom, api *fakeAPI) ([]wire.Action, bool) {
	steps, retry := Plan(o, p, mem)
	var final []wire.Action
	halted := false
	for _, s := range steps {
		switch {
		case halted:
			final = append(final, Queued(s.Action.Target, s.Action.Revision))
		case s.Patch == nil:
			final = append(final, s.Action)
		default:
			err := api.patch(*s.Patch)
			a, halt := Outcome(s, err)
			if err == nil {
				Started(mem, s.Patch)
			}
			final = append(final, a)
			halted = halt
		}
	}
	return final, retry
}

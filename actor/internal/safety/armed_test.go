package safety_test

import "kubehz.dev/agent/actor/internal/desired"

// armed is the healing gate, read from the two flags directly:
// the oracle never asks the code it checks whether healing is on.
func armed(d desired.Document) bool { return d.Execution.Healing && d.Healing.Enabled }

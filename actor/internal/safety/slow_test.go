package safety_test

import "time"

// requestTimeout is the contract's bound on one apiserver read, above the
// 5 s a fenced write may take (docs/contract.md#acting-gate): the longest a
// slow apiserver can hold one delete here.
const requestTimeout = 15 * time.Second

// takeTime moves the clock while a delete is in flight, by up to the
// scenario's slowest answer: a pass of many deletes then ends well after it
// began, and the cooldown and the eviction timeout must run from when each
// delete returned (the checker records that time when the answer comes).
func (a *apiserver) takeTime() {
	if a.slowest > 0 {
		a.w.now = a.w.now.Add(time.Duration(a.r.Int64N(int64(a.slowest/time.Second)+1)) * time.Second)
	}
}

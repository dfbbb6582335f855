package scale

import "testing"

// Removes is what healing counts as in flight after a scale patch of the
// same pass that may have landed (which sends count is refuse's
// MayHaveLanded): every live Machine of the pool past the new count, as
// machine-controller scales them, and at least the drop in spec.replicas,
// which the heal's read may not show yet; from a count that could not be
// read, only the first.
func TestPatch_RemovesEveryLiveMachinePastTheNewCountAndAtLeastTheDrop(t *testing.T) {
	from := func(n int64) *int64 { return &n }
	for _, tc := range []struct {
		name string
		from *int64
		to   int64
		live int
		want int
	}{
		{"a scale-down the read already shows", from(5), 2, 5, 3},
		{"a scale-down the read does not show yet", from(5), 2, 2, 3},
		{"more live Machines than spec.replicas", from(3), 2, 4, 2},
		{"a scale-up", from(2), 5, 2, 0},
		{"no change", from(3), 3, 3, 0},
		{"from an unread count, to 1 of 4 live", nil, 1, 4, 3},
		{"from an unread count, to 0", nil, 0, 4, 4},
		{"from an unread count, to the live count", nil, 4, 4, 0},
		{"from an unread count, above it", nil, 6, 4, 0},
		{"nothing live, nothing read", nil, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Patch{From: tc.from, To: tc.to}).Removes(tc.live); got != tc.want {
				t.Errorf("Removes(%d) = %d, want %d", tc.live, got, tc.want)
			}
		})
	}
}

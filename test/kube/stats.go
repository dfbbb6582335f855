package kube

import "slices"

// Median of xs; the mean of the two middle values when there is an even
// number of them, 0 for none.
func Median(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// MiB is bytes in mebibytes.
func MiB(bytes int64) float64 { return float64(bytes) / (1 << 20) }

package kube

import "testing"

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{
		{nil, 0},
		{[]int64{7}, 7},
		{[]int64{5, 1, 3}, 3},
		{[]int64{5, 1, 3, 2}, 2}, // (2+3)/2, rounded down
		{[]int64{10, 20}, 15},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

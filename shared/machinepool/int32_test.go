package machinepool

import (
	"math"
	"testing"
)

func TestInt32_ReadsOnlyWholeNumbersInInt32Range(t *testing.T) {
	cases := []struct {
		name string
		v    any
		n    int64
		ok   bool
	}{
		{"int64 from the apiserver's JSON", int64(3), 3, true},
		{"a whole float64", float64(5), 5, true},
		{"int", 7, 7, true},
		{"int32", int32(-2), -2, true},
		{"zero", int64(0), 0, true},
		{"the largest int32", float64(2147483647), 2147483647, true},
		{"the smallest int32", int64(-2147483648), -2147483648, true},
		{"one past the largest int32", int64(2147483648), 0, false},
		{"one below the smallest int32", float64(-2147483649), 0, false},
		{"a fraction is not rounded", 2.5, 0, false},
		{"1e300", 1e300, 0, false},
		{"NaN", math.NaN(), 0, false},
		{"infinity", math.Inf(1), 0, false},
		{"a string", "3", 0, false},
		{"absent", nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := map[string]any{"spec": map[string]any{}}
			if tc.v != nil {
				obj["spec"].(map[string]any)["replicas"] = tc.v
			}
			n, ok := Int32(obj, "spec", "replicas")
			if n != tc.n || ok != tc.ok {
				t.Errorf("Int32(%v) = %d, %v; want %d, %v", tc.v, n, ok, tc.n, tc.ok)
			}
		})
	}
}

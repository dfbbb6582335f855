package machinepool

import (
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Int32 reads the integer at path of a machine-controller object the way
// its Go types read their int32 fields (replica counts): int64 from the
// apiserver's JSON, or a whole number in another Go type from other
// decoders. The CRDs give spec and status no schema, so anything may stand
// there; ok is false for anything that is not a whole number in int32
// range (2.5, 1e300, NaN, a string), and n is then 0, never a rounding.
func Int32(obj map[string]any, path ...string) (n int64, ok bool) {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case float64:
		f = x
	default:
		return 0, false
	}
	// NaN fails the first test; the infinities the range.
	if f != math.Trunc(f) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, false
	}
	return int64(f), true
}

package informer_test

import (
	"slices"
	"testing"

	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/informer"
)

type record struct{ name string }

func TestRecords_KeepsOnlyTheRecordTypeInOrder(t *testing.T) {
	a, b := &record{"a"}, &record{"b"}
	items := []any{a, "not a record", cache.DeletedFinalStateUnknown{Key: "x"}, b, record{"value, not pointer"}}
	if got := informer.Records[*record](items); !slices.Equal(got, []*record{a, b}) {
		t.Errorf("Records = %v, want [a b]", got)
	}
	if got := informer.Records[*record](nil); got == nil || len(got) != 0 {
		t.Errorf("Records(nil) = %#v, want an empty, non-nil slice", got)
	}
}

package cluster

import (
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// Compact builds an informer transform that turns each From object into its
// compact To record before it is cached. It is idempotent, as client-go
// requires (watch-list replays and tombstones built from the cache hand a
// record back through it), and it re-wraps tombstones around the record.
func Compact[From, To any](what string, conv func(From) To) cache.TransformFunc {
	var t cache.TransformFunc
	t = func(obj any) (any, error) {
		switch o := obj.(type) {
		case From:
			return conv(o), nil
		case To:
			return o, nil
		case cache.DeletedFinalStateUnknown:
			if o.Obj == nil {
				return o, nil
			}
			inner, err := t(o.Obj)
			if err != nil {
				return nil, err
			}
			return cache.DeletedFinalStateUnknown{Key: o.Key, Obj: inner}, nil
		}
		return nil, fmt.Errorf("%s informer: unexpected %T", what, obj)
	}
	return t
}

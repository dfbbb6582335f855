// Package informer holds what both binaries' informers share: the
// transform that keeps a compact record, never the whole object, in a cache,
// and the read that takes those records back out.
package informer

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// ErrUnexpected is what a transform says of an object it was not made for.
var ErrUnexpected = errors.New("unexpected object")

// Transform builds an informer transform that turns each From object into its
// compact To record before it is cached. It is idempotent, as client-go
// requires (watch-list replays and tombstones built from the cache hand a
// record back through it), and it re-wraps tombstones around the record.
func Transform[From, To any](what string, conv func(From) To) cache.TransformFunc {
	var t cache.TransformFunc
	t = func(obj any) (any, error) {
		// From and To are concrete API and record types, never one the other's
		// interface, so the case order cannot shadow a case; gocritic's
		// caseOrder cannot see through the type parameters.
		//nolint:gocritic // see above
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
		return nil, fmt.Errorf("%s informer: %w %T", what, ErrUnexpected, obj)
	}
	return t
}

package informer

// Records picks the R records out of a cache's items (cache.Store's List).
// A transform made by Transform stores only records, so nothing else is
// expected; anything else is skipped rather than trusted.
func Records[R any](items []any) []R {
	out := make([]R, 0, len(items))
	for _, it := range items {
		if r, ok := it.(R); ok {
			out = append(out, r)
		}
	}
	return out
}

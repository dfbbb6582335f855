package testkit

import "unsafe"

// Pins reports whether part's bytes lie inside whole's: a string cut from
// a longer one shares its memory, and keeps all of it alive for as long as
// the cut is kept.
func Pins(part, whole string) bool {
	if len(part) == 0 || len(whole) == 0 {
		return false
	}
	p, w := uintptr(unsafe.Pointer(unsafe.StringData(part))), uintptr(unsafe.Pointer(unsafe.StringData(whole)))
	return p >= w && p < w+uintptr(len(whole))
}

package platformsim

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// rule checks one decoded JSON value the way a non-strict zod schema would:
// wrong types and broken bounds are issues, unknown object keys are ignored.
type rule interface {
	check(path string, v any, issues *[]Issue)
}

// field is one object key. Optional means absent is fine; a JSON null is
// still a type error, as with zod's .optional().
type field struct {
	name     string
	required bool
	rule     rule
}

type object []field

type array struct {
	max  int
	elem rule
}

// record is a string-keyed map whose values share one rule.
type record struct{ value rule }

// text bounds are UTF-16 code units because zod's .min/.max count
// JavaScript string length; max 0 means unbounded.
type text struct {
	min, max int
	oneOf    []string
}

type integer struct{ min, max int64 }

type boolean struct{}

func fail(issues *[]Issue, path, format string, args ...any) {
	*issues = append(*issues, Issue{Path: path, Message: fmt.Sprintf(format, args...)})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (o object) check(path string, v any, issues *[]Issue) {
	m, ok := v.(map[string]any)
	if !ok {
		fail(issues, path, "expected object, got %s", typeName(v))
		return
	}
	for _, f := range o {
		val, present := m[f.name]
		switch {
		case present:
			f.rule.check(join(path, f.name), val, issues)
		case f.required:
			fail(issues, join(path, f.name), "required")
		}
	}
}

func (a array) check(path string, v any, issues *[]Issue) {
	list, ok := v.([]any)
	if !ok {
		fail(issues, path, "expected array, got %s", typeName(v))
		return
	}
	if len(list) > a.max {
		fail(issues, path, "more than %d entries (%d)", a.max, len(list))
	}
	for i, elem := range list {
		a.elem.check(join(path, strconv.Itoa(i)), elem, issues)
	}
}

func (r record) check(path string, v any, issues *[]Issue) {
	m, ok := v.(map[string]any)
	if !ok {
		fail(issues, path, "expected object, got %s", typeName(v))
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // map order would make the issue list flaky
	for _, k := range keys {
		r.value.check(join(path, k), m[k], issues)
	}
}

func (t text) check(path string, v any, issues *[]Issue) {
	s, ok := v.(string)
	if !ok {
		fail(issues, path, "expected string, got %s", typeName(v))
		return
	}
	n := utf16Len(s)
	if n < t.min {
		fail(issues, path, "shorter than %d UTF-16 code units (%d)", t.min, n)
	}
	if t.max > 0 && n > t.max {
		fail(issues, path, "longer than %d UTF-16 code units (%d)", t.max, n)
	}
	if t.oneOf != nil && !slices.Contains(t.oneOf, s) {
		fail(issues, path, "must be one of %s, got %q", strings.Join(t.oneOf, ", "), s)
	}
}

func (r integer) check(path string, v any, issues *[]Issue) {
	n, ok := v.(json.Number)
	if !ok {
		fail(issues, path, "expected number, got %s", typeName(v))
		return
	}
	// JavaScript holds every number as a float64, so 1e3 and 2.0 are integers
	// and an overflow is Infinity, which is not.
	f, err := strconv.ParseFloat(string(n), 64)
	switch {
	case err != nil || math.IsInf(f, 0):
		fail(issues, path, "expected a finite number, got %s", n)
	case f != math.Trunc(f):
		fail(issues, path, "expected an integer, got %s", n)
	case f < float64(r.min) || f > float64(r.max):
		fail(issues, path, "must be within %d..%d, got %s", r.min, r.max, n)
	}
}

func (boolean) check(path string, v any, issues *[]Issue) {
	if _, ok := v.(bool); !ok {
		fail(issues, path, "expected boolean, got %s", typeName(v))
	}
}

// utf16Len is JavaScript's String.length. Invalid UTF-8 decodes to U+FFFD
// here as it does in the platform's body decoder: one unit.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"time"

	"kubehz.dev/agent/shared/wire"
)

// Reason names one kind of defect Decode found. The words are fixed and
// never quote the document, so a problem is safe to log and the set of
// distinct problems stays small however hostile the data is.
type Reason string

// What discards the whole document.
const (
	TooLarge  Reason = "document is larger than 64 KiB"
	NotJSON   Reason = "document is not valid JSON"
	NotObject Reason = "document is not a JSON object"
)

// What zeroes one field of the document and keeps the rest.
const (
	BadRevision  Reason = "revision is not an integer"
	BadHolder    Reason = "holder is not a string"
	BadUpdatedAt Reason = "updatedAt is not an RFC 3339 time"
	BadActions   Reason = "actions is not a list"
)

// What drops one action and keeps the others.
const (
	BadEntry    Reason = "action is not an object of the wire shape"
	BadType     Reason = "action type is not scale, upgrade or heal"
	BadStatus   Reason = "action status is not pending, in-progress, done or failed"
	EmptyTarget Reason = "action target is empty"
	Duplicate   Reason = "action repeats an earlier type and target"
	OverCap     Reason = "action is beyond the first 20 valid ones"
)

// Problem is one kind of defect and how many times it occurred (entries
// dropped, for the action reasons; 1 otherwise).
type Problem struct {
	Reason Reason
	Count  int
}

// rawDocument defers every field so one of the wrong type spoils only itself.
type rawDocument struct {
	Revision  json.RawMessage `json:"revision"`
	Holder    json.RawMessage `json:"holder"`
	UpdatedAt json.RawMessage `json:"updatedAt"`
	Actions   json.RawMessage `json:"actions"`
}

// Decode reads the ConfigMap's value as untrusted input. It never fails as a
// whole: data over MaxBytes, not JSON or not an object gives an empty
// Document; a bad field is zeroed; a bad action is dropped and the rest
// kept. Each returned action is valid on the wire (see Encode for the rules),
// so one bad entry can never 400 a beat. Problems come in order of first
// occurrence, one per Reason. Absent fields are not problems.
func Decode(data string) (Document, []Problem) {
	var p problems
	if len(data) > MaxBytes {
		return Document{}, p.add(TooLarge)
	}
	b := []byte(data)
	if !json.Valid(b) {
		return Document{}, p.add(NotJSON)
	}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return Document{}, p.add(NotObject)
	}
	var raw rawDocument
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return Document{}, p.add(NotObject) // unreachable after the checks above
	}

	d := Document{
		Revision:  revision(raw.Revision, &p),
		Holder:    holder(raw.Holder, &p),
		UpdatedAt: updatedAt(raw.UpdatedAt, &p),
	}
	var entries []json.RawMessage
	if !field(raw.Actions, &entries) {
		p.add(BadActions)
	}
	var f filter
	for _, e := range entries {
		var a wire.Action
		if !field(e, &a) {
			p.add(BadEntry)
			continue
		}
		a, reason := f.admit(a)
		if reason != "" {
			p.add(reason)
			continue
		}
		d.Actions = append(d.Actions, a)
	}
	return d, p
}

func revision(raw json.RawMessage, p *problems) int64 {
	var n int64
	if !field(raw, &n) {
		p.add(BadRevision)
		return 0
	}
	return clampCount(n)
}

func holder(raw json.RawMessage, p *problems) string {
	var s string
	if !field(raw, &s) {
		p.add(BadHolder)
		return ""
	}
	return wire.Clamp(s, wire.MaxNameLen)
}

// updatedAt keeps whole seconds in UTC, and only years Encode can write
// back, so a decoded document always re-encodes.
func updatedAt(raw json.RawMessage, p *problems) time.Time {
	var s string
	if !field(raw, &s) {
		p.add(BadUpdatedAt)
		return time.Time{}
	}
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, s)
	if t = t.UTC().Truncate(time.Second); err != nil || t.Year() < 0 || t.Year() > 9999 {
		p.add(BadUpdatedAt)
		return time.Time{}
	}
	return t
}

// field decodes one deferred value; absent or null leaves v as it is.
func field(raw json.RawMessage, v any) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	return json.Unmarshal(raw, v) == nil
}

type problems []Problem

// add counts reason, keeping the order of first occurrence, and returns the
// list so whole-document failures read as one line.
func (p *problems) add(reason Reason) []Problem {
	for i := range *p {
		if (*p)[i].Reason == reason {
			(*p)[i].Count++
			return *p
		}
	}
	*p = append(*p, Problem{Reason: reason, Count: 1})
	return *p
}

// Package report is the action-report hand-off between the two binaries. The
// actor's leader writes its current action reports into one ConfigMap; the
// observer reads them back, as untrusted input, and folds them into its beats
// while the actor's Lease is live. This package owns the names and the one
// JSON document both sides agree on.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"kubehz.dev/agent/shared/printable"
	"kubehz.dev/agent/shared/wire"
)

// Where the hand-off lives, in the agents' namespace (kubehz-system). The
// names are the ones deploy/actor ships and the binaries' defaults; a
// kustomize namePrefix changes them, and the manifests then pass the new
// names in (KUBEHZ_ACTIONS_CONFIGMAP, KUBEHZ_ACTOR_LEASE).
const (
	ConfigMapName = "kubehz-actions"
	Key           = "actions.json"
	// LeaseName is the actor's leader-election Lease; the observer reads its
	// holder and renewal to decide whether the reports still stand.
	LeaseName = "kubehz-actor"
	// MaxBytes bounds the document: 20 capped actions fit with room to
	// spare, so anything larger is not ours.
	MaxBytes = 64 << 10
)

// Document is what the ConfigMap's one key holds.
type Document struct {
	// Revision is the desired-state revision the actions answer, 0..wire.MaxCount.
	Revision int64
	// Holder is the Lease holder identity of the leader that wrote the document.
	Holder string
	// UpdatedAt is when the leader wrote it; zero when unknown.
	UpdatedAt time.Time
	// Actions are the reports in store order, at most wire.MaxActions, each
	// valid on the wire and unique by (type, target). Nil when there are none.
	Actions []wire.Action
}

// document is the JSON shape. updatedAt is RFC 3339 in UTC, whole seconds,
// like every timestamp on the wire.
type document struct {
	Revision  int64         `json:"revision"`
	Holder    string        `json:"holder"`
	UpdatedAt string        `json:"updatedAt,omitempty"`
	Actions   []wire.Action `json:"actions"`
}

// Encode renders d for the ConfigMap. It applies the same rules Decode
// enforces, so what the leader writes is exactly what the observer folds:
// strings are clamped to the wire caps, revisions pinned into 0..wire.MaxCount,
// entries Decode would drop (unknown type or status, empty target, a repeated
// type and target) are left out, and only the first wire.MaxActions remain.
// UpdatedAt is written in UTC, truncated to whole seconds. The error is a
// time outside the years 0..9999, or a document over MaxBytes: the caps keep
// even the worst case (every character a six-byte escape) near 63 KiB, so
// that check is a guard a test pins, not a path the actor should meet.
func Encode(d Document) (string, error) {
	out := document{
		Revision: clampCount(d.Revision),
		Holder:   wire.Clamp(d.Holder, wire.MaxNameLen),
		Actions:  []wire.Action{}, // [] rather than null: "no reports" is explicit
	}
	if !d.UpdatedAt.IsZero() {
		at := d.UpdatedAt.UTC().Truncate(time.Second)
		if at.Year() < 0 || at.Year() > 9999 {
			return "", fmt.Errorf("encode action report: updatedAt %d is outside the years 0-9999", at.Year())
		}
		out.UpdatedAt = at.Format(time.RFC3339)
	}
	var f filter
	for _, a := range d.Actions {
		if a, reason := f.admit(a); reason == "" {
			out.Actions = append(out.Actions, a)
		}
	}

	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// The document is never embedded in HTML; escaping <, > and & would
	// only spend six bytes on each.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", fmt.Errorf("encode action report: %w", err)
	}
	// People read the ConfigMap too (kubectl describe): every rune a
	// terminal would obey, which json leaves raw above U+007E, is written as
	// a \u escape; it decodes to the same text and costs at most the six
	// bytes per UTF-16 unit the worst case below already allows.
	s := string(printable.JSON(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
	if len(s) > MaxBytes {
		return "", fmt.Errorf("encode action report: %d bytes exceeds the %d-byte limit", len(s), MaxBytes)
	}
	return s, nil
}

// filter admits actions in order: valid on the wire, clamped, unique by
// (type, target), at most wire.MaxActions. Encode and Decode share it so the
// two sides cannot drift apart.
type filter struct {
	kept []key
}

type key struct{ typ, target string }

// Sendable reports whether a document may carry a: a known type and status
// and a target. (Of two whose targets agree once cut to 253 bytes, the
// second is dropped all the same.)
func Sendable(a wire.Action) bool { return unsendable(a) == "" }

// unsendable is why no document carries a, or "".
func unsendable(a wire.Action) Reason {
	switch {
	case !validType[a.Type]:
		return BadType
	case !validStatus[a.Status]:
		return BadStatus
	case a.Target == "":
		return EmptyTarget
	}
	return ""
}

// admit returns the clamped action, or the reason it is dropped.
func (f *filter) admit(a wire.Action) (wire.Action, Reason) {
	if why := unsendable(a); why != "" {
		return a, why
	}
	a.Target = wire.Clamp(a.Target, wire.MaxNameLen)
	a.Detail = wire.Clamp(a.Detail, wire.MaxNoteLen)
	a.Revision = clampCount(a.Revision)
	k := key{a.Type, a.Target}
	for _, seen := range f.kept {
		if seen == k {
			return a, Duplicate
		}
	}
	if len(f.kept) == wire.MaxActions {
		return a, OverCap
	}
	f.kept = append(f.kept, k)
	return a, ""
}

// The wire enums. Any other value 400s the whole beat, so nothing else
// passes; type and status are short enough that no clamp is needed.
var (
	validType = map[string]bool{
		wire.ActionScale: true, wire.ActionUpgrade: true, wire.ActionHeal: true,
	}
	validStatus = map[string]bool{
		wire.StatusPending: true, wire.StatusInProgress: true, wire.StatusDone: true, wire.StatusFailed: true,
	}
)

func clampCount(n int64) int64 { return min(max(n, 0), wire.MaxCount) }

package report_test

import (
	"reflect"
	"slices"
	"testing"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

var reasons = []report.Reason{
	report.TooLarge, report.NotJSON, report.NotObject, report.BadRevision, report.BadHolder,
	report.BadUpdatedAt, report.BadActions, report.BadEntry, report.BadType, report.BadStatus,
	report.EmptyTarget, report.Duplicate, report.OverCap,
}

// FuzzDecode feeds the observer's untrusted input: whatever the ConfigMap
// holds, Decode must not panic, must return only actions the platform
// accepts, and what it returns must survive Encode and Decode unchanged.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		"", "{}", "null", "[]", `{"actions":null}`,
		doc(entry("scale", "pool-a", "done"), entry("heal", "wrk-b", "pending")),
		doc(entry("restart", "x", "done"), `7`, `null`, entry("scale", "", "done"), entry("scale", "a", "done"), entry("scale", "a", "failed")),
		`{"revision":-1,"holder":"\u0001\ud83d","updatedAt":"2026-07-06T12:00:00.5-11:00","actions":[{"type":"upgrade","target":"\u2028","status":"in-progress","detail":"<&>","revision":99999999999}]}`,
		`{"revision":1e3,"holder":[],"updatedAt":7,"actions":"x"}`,
		"{\"actions\":[{\"type\":\"heal\",\"target\":\"\xff\xfe\",\"status\":\"done\"}]}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		d, problems := report.Decode(data)
		checkDocument(t, d)
		for i, p := range problems {
			if !slices.Contains(reasons, p.Reason) || p.Count < 1 {
				t.Fatalf("problem %+v is not a counted, known reason", p)
			}
			if slices.ContainsFunc(problems[:i], func(q report.Problem) bool { return q.Reason == p.Reason }) {
				t.Fatalf("reason %q listed twice", p.Reason)
			}
		}

		s, err := report.Encode(d)
		if err != nil {
			t.Fatalf("a decoded document does not re-encode: %v", err)
		}
		again, problems := report.Decode(s)
		if problems != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip changed the document\n got %+v (%v)\nwant %+v", again, problems, d)
		}
	})
}

func checkDocument(t *testing.T, d report.Document) {
	t.Helper()
	if d.Revision < 0 || d.Revision > 10_000_000 || wire.Clamp(d.Holder, 253) != d.Holder {
		t.Fatalf("header out of bounds: revision %d, holder %q", d.Revision, d.Holder)
	}
	if len(d.Actions) > 20 || (d.Actions != nil && len(d.Actions) == 0) {
		t.Fatalf("%d actions (nil %v)", len(d.Actions), d.Actions == nil)
	}
	type key struct{ typ, target string }
	seen := map[key]bool{}
	for _, a := range d.Actions {
		switch {
		case a.Type != wire.ActionScale && a.Type != wire.ActionUpgrade && a.Type != wire.ActionHeal:
			t.Fatalf("type %q", a.Type)
		case a.Status != wire.StatusPending && a.Status != wire.StatusInProgress &&
			a.Status != wire.StatusDone && a.Status != wire.StatusFailed:
			t.Fatalf("status %q", a.Status)
		case a.Target == "" || wire.Clamp(a.Target, 253) != a.Target:
			t.Fatalf("target %q", a.Target)
		case wire.Clamp(a.Detail, 256) != a.Detail:
			t.Fatalf("detail %q", a.Detail)
		case a.Revision < 0 || a.Revision > 10_000_000:
			t.Fatalf("revision %d", a.Revision)
		case seen[key{a.Type, a.Target}]:
			t.Fatalf("duplicate %s/%s", a.Type, a.Target)
		}
		seen[key{a.Type, a.Target}] = true
	}
	// The platform's own pass must find nothing to change.
	p := wire.Payload{Actions: slices.Clone(d.Actions)}
	p.Cap()
	if !reflect.DeepEqual(p.Actions, d.Actions) {
		t.Fatalf("Cap changed decoded actions:\n got %+v\nwant %+v", p.Actions, d.Actions)
	}
}

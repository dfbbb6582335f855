package report_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/report"
	"kubehz.dev/agent/shared/wire"
)

func TestDecode(t *testing.T) {
	long := strings.Repeat("x", 300)
	var many []string
	var first20 []wire.Action
	for i := range 25 {
		many = append(many, entry("scale", fmt.Sprintf("pool-%02d", i), "done"))
		if i < 20 {
			first20 = append(first20, scale(fmt.Sprintf("pool-%02d", i), "done"))
		}
	}
	cases := []struct {
		name     string
		data     string
		want     report.Document
		problems []report.Problem
	}{
		{
			name: "a valid document decodes whole",
			data: `{"revision":7,"holder":"actor-0_abc","updatedAt":"2026-07-06T12:00:00Z","actions":[
				{"type":"scale","target":"pool-a","status":"done","detail":"replicas 2 to 3","revision":7},
				{"type":"heal","target":"wrk-b","status":"in-progress","revision":7}]}`,
			want: withActions(
				wire.Action{Type: "scale", Target: "pool-a", Status: "done", Detail: "replicas 2 to 3", Revision: 7},
				wire.Action{Type: "heal", Target: "wrk-b", Status: "in-progress", Revision: 7}),
		},
		{name: "empty object is an empty document", data: `{}`},
		{name: "empty action list is nil", data: doc(), want: withActions()},
		{name: "unknown keys are ignored", data: `{"revision":3,"extra":{"x":[1]},"actions":null}`, want: report.Document{Revision: 3}},
		{name: "empty string", data: "", problems: []report.Problem{{report.NotJSON, 1}}},
		{name: "truncated", data: `{"revision":7,"actions":[`, problems: []report.Problem{{report.NotJSON, 1}}},
		{name: "null", data: " null ", problems: []report.Problem{{report.NotObject, 1}}},
		{name: "a list", data: `[{"type":"scale"}]`, problems: []report.Problem{{report.NotObject, 1}}},
		{name: "a string", data: `"x"`, problems: []report.Problem{{report.NotObject, 1}}},
		{
			name:     "over 64 KiB even when valid",
			data:     doc(entry("scale", "pool-a", "done")) + strings.Repeat(" ", 64<<10),
			problems: []report.Problem{{report.TooLarge, 1}},
		},
		{
			name: "each bad entry is dropped alone",
			data: doc(
				entry("scale", "pool-a", "done"),
				entry("restart", "pool-b", "done"),
				entry("Scale", "pool-c", "done"),
				entry("scale", "pool-d", "running"),
				entry("scale", "", "done"),
				`7`, `null`, `"scale"`,
				`{"type":"scale","target":"pool-e","status":"done","revision":"7"}`,
				entry("upgrade", "pool-f", "failed"),
			),
			want: withActions(scale("pool-a", "done"),
				wire.Action{Type: "upgrade", Target: "pool-f", Status: "failed", Revision: 7}),
			problems: []report.Problem{
				{report.BadType, 3}, // restart, Scale and the null entry's empty type
				{report.BadStatus, 1},
				{report.EmptyTarget, 1},
				{report.BadEntry, 3},
			},
		},
		{
			name:     "duplicates keep the first",
			data:     doc(entry("scale", "pool-a", "pending"), entry("heal", "pool-a", "done"), entry("scale", "pool-a", "done")),
			want:     withActions(scale("pool-a", "pending"), wire.Action{Type: "heal", Target: "pool-a", Status: "done", Revision: 7}),
			problems: []report.Problem{{report.Duplicate, 1}},
		},
		{
			name:     "at most 20 actions, the first ones",
			data:     doc(many...),
			want:     withActions(first20...),
			problems: []report.Problem{{report.OverCap, 5}},
		},
		{
			name: "strings and revisions are clamped",
			data: fmt.Sprintf(`{"revision":-4,"holder":%q,"actions":[
				{"type":"heal","target":%q,"status":"failed","detail":%q,"revision":20000000},
				{"type":"heal","target":"b","status":"failed","revision":-1}]}`, long, long, long),
			want: report.Document{Holder: long[:253], Actions: []wire.Action{
				{Type: "heal", Target: long[:253], Status: "failed", Detail: long[:256], Revision: 10_000_000},
				{Type: "heal", Target: "b", Status: "failed"},
			}},
		},
		{
			name:     "targets equal once clamped are duplicates",
			data:     doc(entry("scale", long, "done"), entry("scale", long+"y", "done")),
			want:     withActions(wire.Action{Type: "scale", Target: long[:253], Status: "done", Revision: 7}),
			problems: []report.Problem{{report.Duplicate, 1}},
		},
		{
			name: "bad header fields are zeroed and the actions kept",
			data: `{"revision":"7","holder":5,"updatedAt":"yesterday","actions":[` + entry("scale", "pool-a", "done") + `]}`,
			want: report.Document{Actions: []wire.Action{scale("pool-a", "done")}},
			problems: []report.Problem{
				{report.BadRevision, 1}, {report.BadHolder, 1}, {report.BadUpdatedAt, 1},
			},
		},
		{
			name:     "a fractional revision is not an integer",
			data:     `{"revision":7.5}`,
			problems: []report.Problem{{report.BadRevision, 1}},
		},
		{
			name:     "actions that are not a list",
			data:     `{"revision":7,"actions":{"type":"scale"}}`,
			want:     report.Document{Revision: 7},
			problems: []report.Problem{{report.BadActions, 1}},
		},
		{
			name: "updatedAt is read into UTC whole seconds",
			data: `{"updatedAt":"2026-07-06T14:00:00.900+02:00"}`,
			want: report.Document{UpdatedAt: at},
		},
		{
			name:     "updatedAt before year 0 in UTC is refused",
			data:     `{"updatedAt":"0000-01-01T00:00:00+01:00"}`,
			problems: []report.Problem{{report.BadUpdatedAt, 1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := report.Decode(tc.data)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("document\n got %+v\nwant %+v", got, tc.want)
			}
			if !reflect.DeepEqual(problems, tc.problems) {
				t.Errorf("problems\n got %v\nwant %v", problems, tc.problems)
			}
		})
	}
}

func TestDecode_RoundTripsEncode(t *testing.T) {
	d := withActions(scale("pool-a", "done"),
		wire.Action{Type: "upgrade", Target: "pool-b", Status: "in-progress", Detail: "kubelet v1.35.5 → v1.35.6", Revision: 7},
		wire.Action{Type: "heal", Target: "wrk-😀", Status: "failed", Revision: 6})
	s, err := report.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	got, problems := report.Decode(s)
	if problems != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("got %+v (%v), want %+v", got, problems, d)
	}
}

// The contract's 64 KiB bound on the reports document, at its edge: 65,536
// bytes are read, 65,537 are too large.
func TestDecode_SixtyFourKiBIsTheEdge(t *testing.T) {
	base := `{"revision":3}`
	for _, tc := range []struct {
		size     int
		tooLarge bool
	}{{64 << 10, false}, {64<<10 + 1, true}} {
		data := base + strings.Repeat(" ", tc.size-len(base))
		_, problems := report.Decode(data)
		if got := slices.ContainsFunc(problems, func(p report.Problem) bool { return p.Reason == report.TooLarge }); got != tc.tooLarge {
			t.Errorf("%d bytes: too large %v, want %v (problems %v)", tc.size, got, tc.tooLarge, problems)
		}
	}
}

package platform

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"kubehz.dev/agent/shared/wire"
)

func FuzzParseVerdict(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"status":"ok"}`,
		`{"availableUpdates":null}`, `{"availableUpdates":[]}`, `{"availableUpdates":{}}`,
		`{"availableUpdates":[{"name":"cilium","current":"1.15.0","latest":"1.16.1"}]}`,
		`{"availableUpdates":[{"name":"a"},null]}`, `{"availableUpdates":[{"name":""}]}`,
		`{"availableUpdates":[{"name":"a","name":"b"}],"availableUpdates":[]}`,
		`{"availableUpdates":[{"name":"\u00e9\ud800"}]}`, `{"availableUpdates":[{"name":1}]}`,
		`{"availableUpdates":[` + strings.Repeat(`{"name":"n"},`, 10) + `{"name":"z"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v := readVerdict(bytes.NewReader(body))
		if !v.Present {
			if v.Updates != nil {
				t.Fatalf("no verdict but updates %#v", v.Updates)
			}
			return
		}
		if len(body) > 128<<10 {
			t.Fatalf("verdict from a %d-byte body", len(body))
		}
		if v.Updates == nil {
			t.Fatal("present verdict with a nil list")
		}
		// Independently of the parser: the entries are the body's list, in
		// order, one for one.
		var doc map[string]json.RawMessage
		var list []json.RawMessage
		if json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc["availableUpdates"], &list) != nil {
			t.Fatalf("verdict %#v from a body without a list", v)
		}
		if len(list) != len(v.Updates) {
			t.Fatalf("%d entries from a list of %d", len(v.Updates), len(list))
		}
		for i, raw := range list {
			var want wire.AvailableUpdate
			if err := json.Unmarshal(raw, &want); err != nil || want != v.Updates[i] || want.Name == "" {
				t.Fatalf("entry %d = %#v, list holds %s", i, v.Updates[i], raw)
			}
		}
	})
}

// A Retry-After header is the platform's (or a proxy's) to write: whatever
// it says, the wait is between none and MaxRetryAfter's 5 minutes, and
// whole delta-seconds within that are read exactly.
func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for _, seed := range []string{"", "0", "30", "300", "301", "99999999999999999999999", "-1", "1.5", " 7 ", "+3",
		"Sat, 05 Dec 2026 12:00:30 GMT", "Sat, 05 Dec 2026 11:00:00 GMT", "Friday, 31-Dec-99 23:59:59 GMT",
		"Mon Jan  2 15:04:05 2006", "\x00", "３０"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got := parseRetryAfter(value, now)
		if got < 0 || got > 5*time.Minute {
			t.Fatalf("parseRetryAfter(%q) = %s, outside 0..5m", value, got)
		}
		if n, err := strconv.Atoi(value); err == nil && isDigits(value) && n <= 300 && got != time.Duration(n)*time.Second {
			t.Fatalf("parseRetryAfter(%q) = %s, want %ds", value, got, n)
		}
	})
}

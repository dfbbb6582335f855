package wire_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"kubehz.dev/agent/shared/wire"
)

func FuzzClamp(f *testing.F) {
	for _, seed := range []struct {
		s   string
		max int
	}{
		{"", 0}, {"abc", 2}, {"ab\U0001F600c", 3}, {"e\u0301", 1}, {"a\xffb", 2},
		{"\xed\xa0\x80", 2}, {"€€€", 3}, {"\uFFFD\xff", 1}, {"x", -3},
	} {
		f.Add(seed.s, seed.max)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		got := wire.Clamp(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("Clamp(%q, %d) = %q is not valid UTF-8", s, limit, got)
		}
		units := utf16Len(got)
		if units > max(limit, 0) {
			t.Fatalf("Clamp(%q, %d) = %q has %d UTF-16 units", s, limit, got, units)
		}
		full := validize(s)
		if !strings.HasPrefix(full, got) {
			t.Fatalf("Clamp(%q, %d) = %q is not a prefix of %q", s, limit, got, full)
		}
		// Maximal: the code point after the cut must not have fitted.
		if rest := full[len(got):]; rest != "" {
			r, _ := utf8.DecodeRuneInString(rest)
			if units+utf16Len(string(r)) <= limit {
				t.Fatalf("Clamp(%q, %d) = %q stopped before %q, which fits", s, limit, got, r)
			}
		}
		if again := wire.Clamp(got, limit); again != got {
			t.Fatalf("Clamp not idempotent: %q then %q", got, again)
		}
	})
}

func FuzzCap(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"nodes":null,"actions":[],"machineIssues":[{"pool":"p"}]}`))
	f.Add([]byte(`{"clusterId":"\ud83d\ude00\ud800x","nodes":[{"name":"b"},{"name":"a"}],` +
		`"actions":[{"target":"t","revision":-9}],"inventory":{"addons":[{"name":""},{"name":"x"}]},` +
		`"workloads":{"pods":{"total":-1,"byNamespace":{"a":20000000}}},"certificates":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p wire.Payload
		if json.Unmarshal(data, &p) != nil {
			return
		}
		p.Cap()
		checkBounds(t, &p)
		once := mustMarshal(t, &p)
		if !json.Valid(once) || !utf8.Valid(once) {
			t.Fatalf("Cap produced invalid JSON: %s", once)
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(once, &keys); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(keys["nodes"], []byte("[")) {
			t.Fatalf(`"nodes" is %s, want an array`, keys["nodes"])
		}

		p.Cap()
		if twice := mustMarshal(t, &p); !bytes.Equal(once, twice) {
			t.Fatalf("second Cap changed the JSON:\n%s\n%s", once, twice)
		}
		var back wire.Payload
		if err := json.Unmarshal(once, &back); err != nil {
			t.Fatal(err)
		}
		back.Cap()
		if again := mustMarshal(t, &back); !bytes.Equal(once, again) {
			t.Fatalf("Cap of the decoded JSON changed it:\n%s\n%s", once, again)
		}
	})
}

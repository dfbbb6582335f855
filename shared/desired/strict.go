package desired

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// encoding/json matches object keys case-insensitively and lets a repeated
// key's last value win, so {"execution":{"Scaling":true}} would authorize
// scaling and {"scaling":false,"scaling":true} would read as true. The
// document authorizes writes to the user's cluster, so it is read with exact
// keys only (a differently cased key is an unknown key, ignored), and a
// document that repeats a key anywhere is rejected whole.

// fields reads one JSON object into its members by exact key. A null
// object has no members.
func fields(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// member decodes m[key] into v; an absent or null member leaves v as it is.
func member(m map[string]json.RawMessage, key string, v any) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// into pairs one exact key with where its value goes.
type into struct {
	key string
	v   any
}

// members decodes each named member in the order given and stops at the
// first error, so a document with two bad members always names the same one.
func members(b []byte, targets ...into) error {
	m, err := fields(b)
	if err != nil {
		return err
	}
	for _, t := range targets {
		if err := member(m, t.key, t.v); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalJSON reads the document's top-level members by exact key.
func (d *Document) UnmarshalJSON(b []byte) error {
	var out Document
	if err := members(b, into{"revision", &out.Revision}, into{"kubernetesVersion", &out.KubernetesVersion},
		into{"workerPools", &out.WorkerPools}, into{"execution", &out.Execution}, into{"healing", &out.Healing}); err != nil {
		return err
	}
	*d = out
	return nil
}

// UnmarshalJSON reads the authorization flags by exact key: only
// "scaling", "upgrades" and "healing" set true may authorize anything.
func (x *Execution) UnmarshalJSON(b []byte) error {
	var out Execution
	if err := members(b, into{"scaling", &out.Scaling}, into{"upgrades", &out.Upgrades}, into{"healing", &out.Healing}); err != nil {
		return err
	}
	*x = out
	return nil
}

// UnmarshalJSON reads the healing policy by exact key; "enabled" arms it.
func (h *Healing) UnmarshalJSON(b []byte) error {
	var out Healing
	if err := members(b, into{"enabled", &out.Enabled}, into{"maxUnhealthy", &out.MaxUnhealthy},
		into{"nodeStartupTimeoutSeconds", &out.NodeStartupTimeoutSeconds},
		into{"unhealthyAfterSeconds", &out.UnhealthyAfterSeconds}, into{"cooldownSeconds", &out.CooldownSeconds}); err != nil {
		return err
	}
	*h = out
	return nil
}

// errDuplicateKey is wrapped with the key; the value is never quoted.
var errDuplicateKey = errors.New("an object repeats a key")

// noDuplicateKeys walks every object in b, at any depth, and fails on the
// first key given twice in one object. b must be valid JSON.
func noDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers are skipped, never converted
	// One entry per open container: the keys seen so far for an object,
	// nil for an array.
	var open []map[string]bool
	expectKey := func() bool { return len(open) > 0 && open[len(open)-1] != nil }
	awaitingValue := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				open = append(open, map[string]bool{})
			case '[':
				open = append(open, nil)
			default:
				open = open[:len(open)-1]
			}
			awaitingValue = false
		case string:
			if expectKey() && !awaitingValue {
				keys := open[len(open)-1]
				if keys[t] {
					return fmt.Errorf("%w: %q", errDuplicateKey, clip(t))
				}
				keys[t] = true
				awaitingValue = true
				continue
			}
			awaitingValue = false
		default:
			awaitingValue = false
		}
	}
}

// clip keeps an error line short whatever key a hostile document sends.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

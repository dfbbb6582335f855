package main

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"kubehz.dev/agent/shared/status"
)

// `actor status` reads a file another process writes; whatever the file
// holds (cut short, garbage, a foreign document), decoding and rendering
// must not panic.
func FuzzDecodeReplicaState(f *testing.F) {
	full, _ := json.Marshal(sample())
	for _, seed := range [][]byte{full, full[:len(full)-1], []byte(`{"reports":[{}]}`), []byte(`[]`)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeReplicaState(b)
		if err != nil {
			return
		}
		_ = status.Render(io.Discard, time.Now(), a)
		_ = status.Render(io.Discard, time.Now(), a.Clamp())
	})
}

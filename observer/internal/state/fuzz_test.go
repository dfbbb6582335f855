package state

import (
	"encoding/json"
	"io"
	"reflect"
	"testing"
	"time"

	"kubehz.dev/agent/shared/status"
)

// The status command reads a file another process writes; whatever the
// file holds (cut short, garbage, a foreign document), decoding and
// rendering must not panic, and what decodes survives a round trip.
func FuzzDecode(f *testing.F) {
	full, _ := json.Marshal(Observer{Version: "dev", Started: now, Beating: true, LastAttempt: now, LastOutcome: "delivered",
		Caches: Caches{Nodes: 3, Pods: 42}, Actor: ActorLease{Holder: "a", Live: true, Riding: 1}})
	for _, seed := range [][]byte{full, full[:len(full)/2], []byte("null"), []byte("{}"), []byte(`{"started":"not a time"}`), {}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Decode(b)
		if err != nil {
			return
		}
		_ = status.Render(io.Discard, time.Now(), o)
		_ = Ready(o, time.Now(), time.Minute)
		again, _ := json.Marshal(o)
		back, err := Decode(again)
		if err != nil || !reflect.DeepEqual(comparable(back), comparable(o)) {
			t.Fatalf("round trip changed the state: %v\n%+v\n%+v", err, back, o)
		}
	})
}

// comparable drops the monotonic and location parts JSON does not keep.
func comparable(o Observer) Observer {
	for _, t := range []*time.Time{&o.Started, &o.Written, &o.LastAttempt, &o.LastDelivered, &o.FailingSince, &o.LastErrorAt} {
		*t = t.UTC()
	}
	return o
}

package status

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample stands in for a binary's record: a text, a time, a flag and a
// count, printed through a Table the way each binary prints its own.
type sample struct {
	Version   string    `json:"version"`
	Started   time.Time `json:"started"`
	Beating   bool      `json:"beating"`
	Count     int       `json:"count"`
	LastError string    `json:"lastError,omitempty"`
}

func (s sample) Render(t *Table) {
	t.Line("version", s.Version)
	t.Age("started", s.Started)
	t.Line("last error", s.LastError)
	t.Row("count", strconv.Itoa(s.Count), s.LastError)
}

// lines renders whatever it is given, to test one Table method at a time.
type lines func(t *Table)

func (l lines) Render(t *Table) { l(t) }

// rendered is r's output at now.
func rendered(t *testing.T, r Renderer) string {
	t.Helper()
	var b strings.Builder
	if err := Render(&b, now, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sampleState() sample {
	return sample{Version: "v1.2.3", Started: now.Add(-time.Hour), Beating: true, Count: 42, LastError: "HTTP 503"}
}

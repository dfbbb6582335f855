package status

import (
	"io"
	"strconv"
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

func (s sample) Render(w io.Writer, now time.Time) error {
	t := NewTable(w, now)
	t.Line("version", s.Version)
	t.Age("started", s.Started)
	t.Line("last error", s.LastError)
	t.Row("count", strconv.Itoa(s.Count), s.LastError)
	return t.Flush()
}

func sampleState() sample {
	return sample{Version: "v1.2.3", Started: now.Add(-time.Hour), Beating: true, Count: 42, LastError: "HTTP 503"}
}

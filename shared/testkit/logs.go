package testkit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Logs is a log sink the component under test writes to from its own
// goroutines while the test reads it.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Count is how many lines contain every one of parts.
func (l *Logs) Count(parts ...string) int {
	n := 0
	for line := range strings.Lines(l.String()) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// Logger writes JSON records at Info and above to l, as the binaries log.
func (l *Logs) Logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, nil))
}

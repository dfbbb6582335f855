package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"kubehz.dev/agent/shared/printable"
)

// Renderer is a binary's state as its status subcommand prints it: the
// lines it adds to a Table, in order.
type Renderer interface {
	Render(t *Table)
}

// Render writes r as aligned "key: value" lines to w, times as ages
// relative to now.
func Render(w io.Writer, now time.Time, r Renderer) error {
	t := &Table{w: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), now: now}
	r.Render(t)
	t.Section()
	return t.err
}

// Table is where a Renderer writes its lines, the form of both binaries'
// `status` output. It holds the time of the report, so times print as ages.
// Nothing reaches the writer before a Section ends.
type Table struct {
	w   *tabwriter.Writer
	now time.Time
	err error // the first write that failed
}

// Line writes one "key: value" line. The value may hold text from outside
// (a platform error, a report detail, a version): escaped, it can neither
// drive the terminal nor forge a line.
func (t *Table) Line(key, value string) {
	_, _ = fmt.Fprintf(t.w, "%s:\t%s\n", key, printable.String(value))
}

// Count writes a line whose value is a number.
func (t *Table) Count(key string, n int) { t.Line(key, strconv.Itoa(n)) }

// Age writes a line whose value is how long ago at was.
func (t *Table) Age(key string, at time.Time) { t.Line(key, Ago(at, t.now)) }

// Outcome writes when something last happened and how it went: "never", or
// its age followed by the outcome.
func (t *Table) Outcome(key string, at time.Time, outcome string) {
	if at.IsZero() {
		t.Line(key, "never")
		return
	}
	t.Line(key, Ago(at, t.now)+", "+outcome)
}

// LastError writes the "last error" line, the error's age and text, and
// nothing while there has been no error.
func (t *Table) LastError(at time.Time, msg string) {
	if msg != "" {
		t.Line("last error", Ago(at, t.now)+": "+msg)
	}
}

// Row writes an indented line of tab-aligned cells, each escaped as Line
// escapes a value.
func (t *Table) Row(cells ...string) {
	for i, c := range cells {
		cells[i] = printable.String(c)
	}
	_, _ = fmt.Fprintf(t.w, "  %s\n", strings.Join(cells, "\t"))
}

// Section writes the lines so far, aligned among themselves: the lines
// after it align apart from them, so wide rows cannot widen the keys above.
func (t *Table) Section() {
	if err := t.w.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// Ago is how long before now t was, in the largest two units: "12s ago",
// "3m04s ago", "2h05m ago", "3d04h ago"; "never" for the zero time.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + (-d).Truncate(time.Second).String() + " (clocks disagree)"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds ago", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dd%02dh ago", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
	}
}

// Print is the status subcommand's output for either binary: the report, or
// with --json the state file as read, indented, with every rune a terminal
// would obey written as a \u escape (the same data to a JSON reader).
func Print(st Renderer, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "--json" {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(printable.JSON(b), '\n'))
		return err
	}
	return Render(stdout, time.Now(), st)
}

package status

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"kubehz.dev/agent/shared/printable"
)

// Render prints the observer's state as aligned "key: value" lines, times
// as ages relative to now.
func (o Observer) Render(w io.Writer, now time.Time) error {
	t := newTable(w)
	t.line("version", o.Version)
	t.line("started", ago(o.Started, now))
	if o.Beating {
		t.line("heartbeat", "sent by this observer")
	} else {
		t.line("heartbeat", "standing down: the heartbeat-owner marker names the lok8s CronJob")
	}
	last := "never"
	if !o.LastAttempt.IsZero() {
		last = ago(o.LastAttempt, now) + ", " + o.LastOutcome
	}
	t.line("last beat", last)
	t.line("last delivered", ago(o.LastDelivered, now))
	if !o.FailingSince.IsZero() {
		t.line("failing since", ago(o.FailingSince, now))
	}
	if o.LastError != "" {
		t.line("last error", ago(o.LastErrorAt, now)+": "+o.LastError)
	}
	t.line("actor lease", o.Actor.describe())
	t.line("nodes", strconv.Itoa(o.Caches.Nodes))
	t.line("pods", strconv.Itoa(o.Caches.Pods))
	t.line("warning events", strconv.Itoa(o.Caches.WarningEvents))
	t.line("machines", strconv.Itoa(o.Caches.Machines))
	t.line("pools", strconv.Itoa(o.Caches.Pools))
	t.line("state written", ago(o.Written, now))
	return t.flush()
}

func (l ActorLease) describe() string {
	switch {
	case l.Holder == "":
		return "no holder (no actor running, or the actor tier is not installed)"
	case !l.Live:
		return l.Holder + " (lapsed: its reports are withheld)"
	default:
		return fmt.Sprintf("%s (live: %d reports ride the beat)", l.Holder, l.Riding)
	}
}

// Render prints the actor replica's state as aligned "key: value" lines,
// then the current revision's reports, one per line.
func (a Actor) Render(w io.Writer, now time.Time) error {
	t := newTable(w)
	t.line("version", a.Version)
	t.line("identity", a.Identity)
	t.line("started", ago(a.Started, now))
	if a.Leading {
		t.line("leading", "yes")
	} else {
		t.line("leading", "no (standby)")
	}
	holder := a.LeaseHolder
	if holder == "" {
		holder = "none seen"
	}
	t.line("lease holder", holder)
	poll := "never"
	if !a.LastPoll.IsZero() {
		poll = ago(a.LastPoll, now) + ", " + a.LastPollOutcome
	}
	t.line("last poll", poll)
	if a.LastError != "" {
		t.line("last error", ago(a.LastErrorAt, now)+": "+a.LastError)
	}
	t.line("machine deployments", strconv.Itoa(a.Caches.MachineDeployments))
	t.line("machines", strconv.Itoa(a.Caches.Machines))
	t.line("nodes", strconv.Itoa(a.Caches.Nodes))
	t.line("state written", ago(a.Written, now))
	t.line("revision", strconv.FormatInt(a.Revision, 10))
	t.line("reports", strconv.Itoa(len(a.Reports)))
	if err := t.flush(); err != nil {
		return err
	}
	// A table of their own: their columns must not widen the keys above.
	r := newTable(w)
	for _, rep := range a.Reports {
		detail := rep.Detail
		if detail == "" {
			detail = "-"
		}
		_, _ = fmt.Fprintf(r.w, "  %s\t%s\t%s\t%s\n", printable.String(rep.Action), printable.String(rep.Pool),
			printable.String(rep.Status), printable.String(detail))
	}
	return r.flush()
}

type table struct{ w *tabwriter.Writer }

func newTable(w io.Writer) table { return table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)} }

// line writes one "key: value" line. The value may hold text from outside
// (a platform error, a report detail, a version): escaped, it can neither
// drive the terminal nor forge a line.
func (t table) line(key, value string) {
	_, _ = fmt.Fprintf(t.w, "%s:\t%s\n", key, printable.String(value))
}

func (t table) flush() error { return t.w.Flush() }

// ago is how long before now t was, in the largest two units: "12s ago",
// "3m04s ago", "2h05m ago", "3d04h ago"; "never" for the zero time.
func ago(t, now time.Time) string {
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
func Print(st interface {
	Render(io.Writer, time.Time) error
}, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "--json" {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(printable.JSON(b), '\n'))
		return err
	}
	return st.Render(stdout, time.Now())
}

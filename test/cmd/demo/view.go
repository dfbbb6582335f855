package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// On a terminal the view redraws in place: home the cursor, rewrite each
// line clearing its tail, then clear whatever an earlier, longer frame left.
const (
	cursorHome  = "\x1b[H"
	clearLine   = "\x1b[K"
	clearBelow  = "\x1b[J"
	clearScreen = "\x1b[2J"
	maxNotes    = 8 // story lines kept on a terminal frame
	maxRows     = 6 // warning events and machine issues shown per frame
)

// screen shows what the platform sees, the current story step and the
// story so far. On a terminal it redraws every refresh; otherwise it prints
// story lines as they come and a snapshot whenever the picture changes, so
// a log or a test reads it without escape codes.
type screen struct {
	out     io.Writer
	tty     bool
	plat    *platform
	leases  kubernetes.Interface
	refresh time.Duration

	mu        sync.Mutex
	caption   string
	notes     []string
	lastFrame string // plain mode: the last snapshot printed, beat number aside
	drawn     bool
}

// step sets the caption every frame carries.
func (s *screen) step(caption string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caption = caption
	if !s.tty {
		fmt.Fprintf(s.out, "\n%s  ▶ %s\n", time.Now().Format(time.TimeOnly), s.caption)
	}
}

// note tells one thing that happened in the story.
func (s *screen) note(format string, args ...any) {
	line := time.Now().Format(time.TimeOnly) + "  " + fmt.Sprintf(format, args...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tty {
		fmt.Fprintln(s.out, line)
		return
	}
	s.notes = append(s.notes, line)
	if len(s.notes) > maxNotes {
		s.notes = s.notes[len(s.notes)-maxNotes:]
	}
}

// run draws until ctx is done, then draws once more so the last frame
// shows how the story ended.
func (s *screen) run(ctx context.Context) {
	tick := time.NewTicker(s.refresh)
	defer tick.Stop()
	for {
		s.draw(ctx)
		select {
		case <-ctx.Done():
			s.draw(context.WithoutCancel(ctx))
			return
		case <-tick.C:
		}
	}
}

func (s *screen) draw(ctx context.Context) {
	b, ok := s.plat.Latest()
	leader := s.leader(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	header, body := frame(b, ok, leader, s.caption)
	if !s.tty {
		if body != s.lastFrame {
			s.lastFrame = body
			fmt.Fprintf(s.out, "%s  %s\n%s", time.Now().Format(time.TimeOnly), header, body)
		}
		return
	}
	var buf strings.Builder
	if !s.drawn {
		buf.WriteString(clearScreen) // once: what the terminal showed before
		s.drawn = true
	}
	buf.WriteString(cursorHome)
	header += "   (now " + time.Now().Format(time.TimeOnly) + ", Ctrl-C to stop)"
	lines := append([]string{header}, strings.Split(strings.TrimRight(body, "\n"), "\n")...)
	lines = append(lines, "", "Story so far")
	lines = append(lines, s.notes...)
	for _, l := range lines {
		buf.WriteString(l + clearLine + "\n")
	}
	buf.WriteString(clearBelow)
	_, _ = io.WriteString(s.out, buf.String())
}

// leader says who holds the actor's Lease: the beat carries the actor's
// reports only while that Lease is live, but not the holder's name.
func (s *screen) leader(ctx context.Context) string {
	holder, live, err := leaseHolder(ctx, s.leases)
	switch {
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case holder == "":
		return "nobody: the Lease is free"
	case !live:
		return "nobody: " + holder + "'s term has lapsed"
	}
	return holder
}

// leaseHolder reads the actor's Lease: its holder, and whether the last
// renewal still vouches for them.
func leaseHolder(ctx context.Context, client kubernetes.Interface) (holder string, live bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	l, err := client.CoordinationV1().Leases("kubehz-system").Get(ctx, "kubehz-actor", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return "", false, err
	}
	holder = *l.Spec.HolderIdentity
	live = l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil &&
		time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
	return holder, live, nil
}

// frame renders the platform's picture: a header naming the beat, and a
// body that changes only when what the platform sees changes.
func frame(b beat, ok bool, leader, caption string) (header, body string) {
	if !ok {
		return "What the platform sees: no heartbeat yet", "  " + caption + "\n  Actor leader: " + leader + "\n"
	}
	header = fmt.Sprintf("What the platform sees: heartbeat #%d, received %s", b.Seq, b.At.Format(time.TimeOnly))
	var w strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&w, "  "+format+"\n", args...) }
	p("%s", caption)
	p("")
	p("%-28s %-9s %-15s %-9s %s", fmt.Sprintf("NODES (%d)", len(b.Nodes)), "STATE", "ROLE", "KUBELET", "SERVER")
	for _, n := range b.Nodes {
		p("%-28s %-9s %-15s %-9s %s", n.Name, n.Status, n.Roles, n.KubeletVersion, n.InstanceType)
	}
	pods := b.Workloads.Pods
	p("PODS      %d in total: %d running, %d pending, %d succeeded, %d failed",
		pods.Total, pods.Running, pods.Pending, pods.Succeeded, pods.Failed)
	var pools []string
	for _, pl := range b.Pools {
		pools = append(pools, fmt.Sprintf("%s: %s, %d ready", pl.Name, plural(pl.Replicas, "machine"), pl.Ready))
	}
	p("POOLS     %s", orNone(strings.Join(pools, "   ")))
	p("MACHINE ISSUES%s", countOrNone(len(b.MachineIssues)))
	for i, m := range b.MachineIssues {
		if i == maxRows {
			p("  … and %d more", len(b.MachineIssues)-i)
			break
		}
		p("  %s  %s  %s: %s", m.Pool, m.Machine, m.Reason, m.Message)
	}
	p("WARNING EVENTS%s", countOrNone(len(b.Events)))
	for i, e := range b.Events {
		if i == maxRows {
			p("  … and %d more", len(b.Events)-i)
			break
		}
		// Namespace and message ride only with KUBEHZ_REPORT_NAMESPACES.
		line := fmt.Sprintf("  %s %s ×%d", e.Kind, e.Reason, e.Count)
		if e.Namespace != "" {
			line += " in " + e.Namespace
		}
		if e.Note != "" {
			line += ": " + e.Note
		}
		p("%s", line)
	}
	switch {
	case b.HasActions:
		p("ACTIONS (the actor's reports, carried by the observer's beat)")
	case leader != "" && !strings.HasPrefix(leader, "nobody"):
		p("ACTIONS: none reported")
	default:
		p("ACTIONS: none: no actor holds a live Lease, so the beat carries no actions and the platform clears its list")
	}
	for _, a := range b.Actions {
		p("  %-8s %-20s %-12s revision %d  %s", a.Type, a.Target, a.Status, a.Revision, a.Detail)
	}
	p("ACTOR LEADER  %s  (from the Lease kubehz-system/kubehz-actor)", leader)
	return header, w.String()
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func countOrNone(n int) string {
	if n == 0 {
		return ": none"
	}
	return fmt.Sprintf(" (%d)", n)
}

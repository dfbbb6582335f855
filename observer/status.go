package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"kubehz.dev/agent/observer/internal/beat"
	"kubehz.dev/agent/observer/internal/state"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/status"
)

// stateFile keeps the state `observer status` prints and `observer ready`
// judges. It is written when a delivery attempt ends (at most once per beat
// or retry) and otherwise at most once per full interval, or when who owns
// the beat or the actor's Lease changes: never per informer event.
type stateFile struct {
	path  string
	every time.Duration
	log   *slog.Logger

	// The observer's parts (attach); nil until then, so a state written
	// before the clients exist has none.
	beating func() bool
	sizes   func() state.Caches
	actor   func(now time.Time) state.ActorLease

	mu      sync.Mutex
	st      state.Observer
	written time.Time
	warned  bool
}

func newStateFile(path string, started time.Time, version string, every time.Duration, log *slog.Logger) *stateFile {
	f := &stateFile{path: path, every: every, log: log,
		st: state.Observer{Version: version, Started: started, Beating: true}}
	f.mu.Lock()
	f.write(started)
	f.mu.Unlock()
	return f
}

// attach gives the file the observer's parts to read. The file exists
// before them, so that a token that cannot be read shows in `observer
// status`; attach is called once, while the observer is built and before
// anything calls turned or delivered.
func (f *stateFile) attach(beating func() bool, sizes func() state.Caches, actor func(now time.Time) state.ActorLease) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beating, f.sizes, f.actor = beating, sizes, actor
}

// delivered records how a delivery attempt ended.
func (f *stateFile) delivered(o beat.Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st.LastAttempt = o.At
	f.st.LastOutcome = outcome(o.Err)
	if o.Err == nil {
		f.st.LastDelivered, f.st.FailingSince = o.At, time.Time{}
	} else {
		if f.st.FailingSince.IsZero() {
			f.st.FailingSince = o.At
		}
		f.st.LastError, f.st.LastErrorAt = o.Err.Error(), o.At
	}
	f.refresh(o.At)
	f.write(o.At)
}

// turned refreshes the file on a turn of the beat loop when something an
// operator reads first changed, or a full interval has passed.
func (f *stateFile) turned(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	before := f.st
	f.refresh(now)
	if f.st.Beating != before.Beating || f.st.Actor != before.Actor || now.Sub(f.written) >= f.every {
		f.write(now)
	}
}

// refresh reads the parts; called with mu held.
func (f *stateFile) refresh(now time.Time) {
	if f.beating == nil {
		return
	}
	beating := f.beating()
	if !beating && f.st.Beating {
		// Standing down sends nothing: a failure streak from before is
		// over, and a later return to beating starts a fresh one.
		f.st.FailingSince = time.Time{}
	}
	f.st.Beating = beating
	f.st.Actor = f.actor(now)
}

// write stores the state; called with mu held, so one write at a time
// uses the temp file.
func (f *stateFile) write(now time.Time) {
	// Counted here, not on every turn of the beat loop: counting copies
	// every cache's keys under its lock, and the loop turns on every change.
	if f.sizes != nil {
		f.st.Caches = f.sizes()
	}
	f.st.Written = now
	f.written = now
	err := status.Write(f.path, f.st.Clamp())
	if err != nil && !f.warned {
		f.warned = true
		f.log.Warn("Cannot write the state file; `observer status` and the readiness probe will not see this process",
			"path", f.path, "err", err)
	}
}

// outcome names how an attempt ended in a word or two.
func outcome(err error) string {
	var se *platform.StatusError
	switch {
	case err == nil:
		return "delivered"
	case errors.As(err, &se):
		return fmt.Sprintf("HTTP %d", se.Code)
	default:
		return "error"
	}
}

// statusCommand prints the running observer's state: `observer status`, or
// `observer status --json` for the raw file.
func statusCommand(args []string, getenv func(string) string, stdout io.Writer) error {
	st, err := state.Read(status.PathNextTo(livenessPath(getenv)))
	if err != nil {
		return err
	}
	return status.Print(st, args, stdout)
}

// readyCommand is the exec readiness probe: it fails while heartbeat
// delivery has failed for longer than KUBEHZ_READY_AFTER_FAILING.
func readyCommand(ctx context.Context, getenv func(string) string) error {
	after, err := loadReadiness(ctx, config.Getenv(getenv))
	if err != nil {
		return err
	}
	st, err := state.Read(status.PathNextTo(livenessPath(getenv)))
	if err != nil {
		return err
	}
	return state.Ready(st, time.Now(), after)
}

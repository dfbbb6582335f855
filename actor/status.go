package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"kubehz.dev/agent/actor/internal/desired"
	"kubehz.dev/agent/actor/internal/execute"
	"kubehz.dev/agent/shared/status"
	"kubehz.dev/agent/shared/wire"
)

// stateFile keeps the state `actor status` prints. It is written when this
// replica starts or stops leading, when the Lease's holder changes, after
// every /desired request and every report publish: at most a few times per
// poll, never per informer event.
type stateFile struct {
	path string
	log  *slog.Logger

	mu     sync.Mutex
	st     replicaState
	sizes  func() cacheSizes // the leader's caches; nil outside a term
	warned bool
}

func newStateFile(path, identity, version string, started time.Time, log *slog.Logger) *stateFile {
	f := &stateFile{path: path, log: log,
		st: replicaState{Version: version, Identity: identity, Started: started}}
	f.update(func(*replicaState) bool { return true })
	return f
}

// leading records a term's start, with the caches it reads, or its end.
func (f *stateFile) leading(sizes func() cacheSizes) {
	f.update(func(st *replicaState) bool {
		f.sizes = sizes
		st.Leading = sizes != nil
		if sizes == nil {
			st.Caches = cacheSizes{}
		}
		return true
	})
}

// holder records the Lease's holder; only a change is written.
func (f *stateFile) holder(h string) {
	f.update(func(st *replicaState) bool {
		changed := st.LeaseHolder != h
		st.LeaseHolder = h
		return changed
	})
}

func (f *stateFile) polled(r desired.PollResult) {
	f.update(func(st *replicaState) bool {
		st.LastPoll, st.LastPollOutcome = r.At, r.Outcome
		if r.Err != nil {
			st.LastError, st.LastErrorAt = r.Err.Error(), r.At
		}
		return true
	})
}

func (f *stateFile) published(rev int64, actions []wire.Action, err error) {
	f.update(func(st *replicaState) bool {
		st.Revision, st.Reports = rev, reportsFrom(actions)
		// A publish cut short by the term's end is no error to show.
		if err != nil && !errors.Is(err, context.Canceled) {
			st.LastError, st.LastErrorAt = "publish reports: "+err.Error(), time.Now()
		}
		return true
	})
}

// update applies change and writes the file when it reports a change. The
// lock serializes writers, which share one temp file.
func (f *stateFile) update(change func(st *replicaState) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !change(&f.st) {
		return
	}
	if f.sizes != nil {
		f.st.Caches = f.sizes()
	}
	f.st.Written = time.Now()
	err := status.Write(f.path, f.st.Clamp())
	if err != nil && !f.warned {
		f.warned = true
		f.log.Warn("Cannot write the state file; `actor status` will not see this replica", "path", f.path, "err", err)
	}
}

// recordedPublisher tells the state file what every publish carried.
type recordedPublisher struct {
	execute.Publisher
	state *stateFile
}

func (p recordedPublisher) Publish(ctx context.Context, rev int64, actions []wire.Action) error {
	err := p.Publisher.Publish(ctx, rev, actions)
	p.state.published(rev, actions, err)
	return err
}

// statusCommand prints this replica's state: `actor status`, or
// `actor status --json` for the raw file.
func statusCommand(args []string, getenv func(string) string, stdout io.Writer) error {
	st, err := readReplicaState(status.PathNextTo(livenessPath(getenv)))
	if err != nil {
		return err
	}
	return status.Print(st, args, stdout)
}

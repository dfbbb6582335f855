package kube

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// envtest starts etcd and kube-apiserver in process groups of their own, so
// a Ctrl-C at the terminal, or make test's cleanup sending SIGTERM, reaches
// the test binary but not them: an interrupted run used to leave both
// running, holding their ports and data directories, until someone killed
// them by hand. The binaries a test starts share the test's process group,
// which a SIGTERM to the test alone does not reach either. So while anything
// is running, SIGINT and SIGTERM stop it all, then end the test binary as
// the signal would have; StopBeforeTimeout does the same for a timeout. The
// demo is not a test binary: it stops what it started itself, and tells the
// story as it does.
var cleanup struct {
	sync.Mutex
	next     int
	stops    map[int]func()
	quit     chan struct{}
	stopping bool // stopAll has taken the stops it runs
}

// onInterrupt runs stop if the test binary is interrupted before the
// returned forget is called. Register before starting what stop stops (see
// launch): once stopAll has begun, onInterrupt never returns, since what
// its caller went on to start would outlive the binary, which exits (or
// panics at its timeout) soon after.
func onInterrupt(stop func()) (forget func()) {
	if !testing.Testing() {
		return func() {}
	}
	cleanup.Lock()
	if cleanup.stopping {
		cleanup.Unlock()
		fmt.Fprintln(os.Stderr, "kube: stopping what the tests started; starting nothing more")
		select {}
	}
	defer cleanup.Unlock()
	if len(cleanup.stops) == 0 {
		cleanup.stops = map[int]func(){}
		cleanup.quit = make(chan struct{})
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, interruptSignals()...)
		go awaitInterrupt(signals, cleanup.quit)
	}
	id := cleanup.next
	cleanup.next++
	cleanup.stops[id] = stop
	return func() {
		cleanup.Lock()
		defer cleanup.Unlock()
		if _, ok := cleanup.stops[id]; !ok {
			return
		}
		delete(cleanup.stops, id)
		// The watcher goes when nothing is left to stop, so goleak sees
		// no goroutine of ours after a test that stopped what it started.
		if len(cleanup.stops) == 0 {
			close(cleanup.quit)
		}
	}
}

// interruptSignals are the signals that stop everything: SIGTERM, and
// SIGINT unless the binary was started with SIGINT ignored. A shell without
// job control starts its background commands so: a Ctrl-C, which reaches
// every process of the terminal's group, is the shell's to handle, and the
// shell stops them with SIGTERM (make test's cleanup, then hack/e2e.sh's).
// Catching the Ctrl-C as well made that SIGTERM a second signal, which ends
// the binary at once, before its stops: a Ctrl-C on make test left etcd
// running. (os/signal's Notify would otherwise stop SIGINT being ignored.)
func interruptSignals() []os.Signal {
	if signal.Ignored(syscall.SIGINT) {
		return []os.Signal{syscall.SIGTERM}
	}
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM}
}

func awaitInterrupt(signals chan os.Signal, quit chan struct{}) {
	select {
	case <-quit:
		signal.Stop(signals)
	case sig := <-signals:
		// A second signal ends the binary at once, as if nothing caught
		// the first: someone who asks twice does not want to wait for a
		// start under way to end, and then for the stops.
		signal.Stop(signals)
		fmt.Fprintf(os.Stderr, "kube: %s: stopping what the tests started (signal again to end at once)\n", sig)
		stopAll()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}
}

// TempDir makes a directory for a TestMain's files (built binaries, an
// audit log) that remove deletes, and that an interrupt, or the stop before
// a timeout, deletes if remove has not run by then.
func TempDir(pattern string) (dir string, remove func(), err error) {
	forget, err := launch("a temporary directory", func() (err error) {
		dir, err = os.MkdirTemp("", pattern)
		return err
	}, func() { _ = os.RemoveAll(dir) })
	if err != nil {
		return "", nil, err
	}
	return dir, func() { forget(); _ = os.RemoveAll(dir) }, nil
}

// launch registers stop with onInterrupt, then runs start. An interrupt
// that lands while start runs waits for it to end before it stops, saying
// that what (for the log) is still starting: a stop that ran first would
// find nothing to stop, and what start went on to launch would outlive the
// binary. If start fails, stop is forgotten; it has run only if an
// interrupt came first.
func launch(what string, start func() error, stop func()) (forget func(), err error) {
	var starting sync.Mutex
	starting.Lock()
	forget = onInterrupt(func() {
		if !starting.TryLock() {
			fmt.Fprintf(os.Stderr, "kube: %s is still starting; stopping it once it has\n", what)
			starting.Lock()
		}
		defer starting.Unlock()
		stop()
	})
	err = start()
	starting.Unlock()
	if err != nil {
		forget()
	}
	return forget, err
}

// stopAll stops everything registered and still running, side by side.
func stopAll() int {
	cleanup.Lock()
	cleanup.stopping = true
	stops := make([]func(), 0, len(cleanup.stops))
	for _, stop := range cleanup.stops {
		stops = append(stops, stop)
	}
	cleanup.Unlock()
	var wg sync.WaitGroup
	for _, stop := range stops {
		wg.Go(stop)
	}
	wg.Wait()
	return len(stops)
}

// StopBeforeTimeout is for TestMain, just before m.Run. A test binary that
// runs past -test.timeout panics, and a panic runs no cleanup: the control
// planes would outlive it, as they outlived an interrupt. So a tenth of the
// timeout before it (a minute at most), everything still running is
// stopped, and the stuck test then fails or times out and prints its
// goroutines as before. It parses the command line if m.Run has not yet.
func StopBeforeTimeout() (disarm func()) {
	return stopBefore(0)
}

// stopBefore is StopBeforeTimeout stopping margin before the timeout, or
// timeoutMargin before it when margin is zero.
func stopBefore(margin time.Duration) (disarm func()) {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	timeout, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || timeout <= 0 {
		return func() {}
	}
	if margin == 0 {
		margin = timeoutMargin(timeout)
	}
	timer := time.AfterFunc(timeout-margin, func() {
		fmt.Fprintf(os.Stderr, "kube: -test.timeout (%s) is %s away, and its panic stops nothing: stopping what the tests started\n", timeout, margin)
		fmt.Fprintf(os.Stderr, "kube: stopped %d control planes, processes and temporary directories\n", stopAll())
	})
	return func() { timer.Stop() }
}

// timeoutMargin leaves time to stop control planes under load, and is
// short beside a timeout the tests are meant to stay well inside.
func timeoutMargin(timeout time.Duration) time.Duration {
	return min(timeout/10, time.Minute)
}

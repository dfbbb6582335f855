package kube

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kubehz.dev/agent/shared/testkit"
)

// childEnv runs this test binary as the child of one of the tests below,
// in the mode it names.
const childEnv = "KUBEHZ_TEST_CHILD"

const (
	interruptedChild = "interrupted"
	timedOutChild    = "timed-out"
	startingChild    = "interrupted-while-starting"
	lateChild        = "starting-after-the-interrupt"
	stuckChild       = "stuck-stopping"
)

// runChild is TestMain in a child: it starts a control plane and a
// process, makes a TempDir, prints what it started on one line, and then
// waits for the signal (interrupted), or hangs in
// TestTimedOutChild_HangsUntilTheTimeout until -test.timeout with the stop
// set 10 s before it (timed-out).
func runChild(m *testing.M, mode string) int {
	switch mode {
	case startingChild:
		return runStartingChild()
	case lateChild:
		return runLateChild()
	case stuckChild:
		onInterrupt(func() { time.Sleep(10 * time.Minute) }) // a stop that never ends
		fmt.Println("starting")
		time.Sleep(10 * time.Minute)
		return 1
	}
	fail := func(err error) int {
		fmt.Println("error:", err)
		return 1
	}
	env, err := Start(Options{})
	if err != nil {
		return fail(err)
	}
	sleeper, err := StartProcess("/bin/sleep", nil, "600")
	if err != nil {
		return fail(err)
	}
	tmp, _, err := TempDir("kubehz-child-") // left for the signal or the timeout to remove
	if err != nil {
		return fail(err)
	}
	// Under procs: the signal's Stop, which holds it, clears what is read
	// here, and the race detector sees no order between the two otherwise.
	env.procs.Lock()
	etcdDir, certDir := env.env.ControlPlane.Etcd.DataDir, env.env.ControlPlane.APIServer.CertDir
	env.procs.Unlock()
	apiserver, _, _, err := env.apiserverProcess()
	if err != nil {
		return fail(err)
	}
	etcd, _, _, err := findProcess("etcd", "--data-dir="+etcdDir)
	if err != nil {
		return fail(err)
	}
	fmt.Println(apiserver, etcd, sleeper.Pid(), certDir, etcdDir, tmp)
	if mode == timedOutChild {
		stopBefore(10 * time.Second)
		return m.Run()
	}
	time.Sleep(10 * time.Minute)
	return 1
}

// runStartingChild says "starting" and starts a control plane, which the
// signal meant to stop it interrupts. Beside it the stopping runs a stop
// that takes 5 s, as other control planes' stops take a while: time enough
// for envtest to go on to launch the apiserver after a stop that did not
// wait for the start.
func runStartingChild() int {
	onInterrupt(func() { time.Sleep(5 * time.Second) })
	fmt.Println("starting")
	if _, err := Start(Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	time.Sleep(10 * time.Minute) // the signal ends the child
	return 1
}

// runLateChild says "starting", waits for the signal's stopping to begin,
// and only then starts a control plane. Beside it the stopping runs a stop
// that takes 5 s, as runStartingChild's does: time enough for envtest to
// launch etcd, if the start went ahead.
func runLateChild() int {
	onInterrupt(func() { time.Sleep(5 * time.Second) })
	fmt.Println("starting")
	for began := false; !began; time.Sleep(time.Millisecond) {
		cleanup.Lock()
		began = cleanup.stopping
		cleanup.Unlock()
	}
	if _, err := Start(Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	time.Sleep(10 * time.Minute) // the signal ends the child
	return 1
}

// TestTimedOutChild_HangsUntilTheTimeout is the timed-out child's test,
// skipped anywhere else.
func TestTimedOutChild_HangsUntilTheTimeout(t *testing.T) {
	if os.Getenv(childEnv) != timedOutChild {
		t.Skip("run only as the child of TestTimeout_StopsTheControlPlaneBeforeThePanic")
	}
	time.Sleep(10 * time.Minute)
}

// TestInterrupt_StopsTheControlPlaneAndTheProcessesItStarted: make test
// stops a failed run's test binaries with SIGTERM, as a terminal's Ctrl-C
// stops them with SIGINT; whatever they started must go with them, and
// envtest's data directories and TempDir's too.
func TestInterrupt_StopsTheControlPlaneAndTheProcessesItStarted(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c := startChild(t, interruptedChild, "-test.run=^$")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.awaitExit(t, 90*time.Second); code != 128+15 {
		t.Errorf("child ended with code %d, want 143 as a SIGTERM ending; stderr:\n%s", code, c.stderr.String())
	}
	c.requireAllGone(t)
}

// TestInterrupt_ACtrlCLeftToTheShellThenItsSIGTERMStopEverything: a Ctrl-C
// on make test reaches every process of the terminal's group, the test
// binaries it runs in the background among them, and a moment later make
// test's cleanup and hack/e2e.sh send those binaries SIGTERM. Started in
// the background with SIGINT ignored, a binary leaves the Ctrl-C to the
// shell, and the SIGTERM is its one signal; when it caught the Ctrl-C too,
// the SIGTERM came as a second signal, ended it at once, and etcd ran on.
func TestInterrupt_ACtrlCLeftToTheShellThenItsSIGTERMStopEverything(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c := startChildIgnoringSIGINT(t, interruptedChild, "-test.run=^$")
	// The control: the child, which has set up its signal handling, still
	// ignores SIGINT as the shell started it.
	if !ignores(t, c.cmd.Process.Pid, syscall.SIGINT) {
		t.Fatal("the child does not ignore SIGINT: it caught the Ctrl-C the shell left to itself")
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the shell's SIGTERM comes a moment later
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.awaitExit(t, 90*time.Second); code != 128+15 {
		t.Errorf("child ended with code %d, want 143 as a SIGTERM ending; stderr:\n%s", code, c.stderr.String())
	}
	c.requireAllGone(t)
	if stderr := c.stderr.String(); strings.Contains(stderr, "kube: interrupt:") || !strings.Contains(stderr, "kube: terminated: stopping") {
		t.Errorf("the child did not stop on the SIGTERM alone; stderr:\n%s", stderr)
	}
}

// ignores reports whether process pid ignores sig, from the SigIgn mask
// in /proc/<pid>/status.
func ignores(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			bits, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return bits&(1<<(sig-1)) != 0
		}
	}
	t.Fatalf("no SigIgn in /proc/%d/status", pid)
	return false
}

// TestInterrupt_DuringAControlPlaneStartStopsItOnceItHasStarted: an
// interrupt often lands while a control plane is starting. envtest's stop
// skips what it has not launched yet, so a stop that ran beside the start
// left the apiserver, and the etcd, the start went on to launch running
// after the binary ended. Here the signal lands once etcd runs and the
// apiserver is still coming up.
func TestInterrupt_DuringAControlPlaneStartStopsItOnceItHasStarted(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c, tmp := startInTempDir(t, startingChild)
	for deadline := time.Now().Add(3 * time.Minute); !running(tmp, "etcd"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the child launched no etcd within 3 minutes; stderr:\n%s", c.stderr.String())
		}
	}
	// The control: the signal met the start under way.
	c.interruptLeavingNothing(t, tmp, "kube: a control plane is still starting; stopping it once it has")
}

// TestInterrupt_AStartAfterTheStoppingBeganLaunchesNothing: a start that
// comes once an interrupt's stopping has taken what it stops would launch
// processes nothing stops; it launches none, and waits for the binary's
// end.
func TestInterrupt_AStartAfterTheStoppingBeganLaunchesNothing(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c, tmp := startInTempDir(t, lateChild)
	// The control: the start was asked for while the stopping ran.
	c.interruptLeavingNothing(t, tmp, "kube: stopping what the tests started; starting nothing more")
}

// TestInterrupt_ASecondSignalEndsTheBinaryAtOnce: the stop the first
// signal began may wait on a start, then on slow stops; someone who
// signals again wants the binary gone now, as if nothing caught signals.
func TestInterrupt_ASecondSignalEndsTheBinaryAtOnce(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c, _ := startInTempDir(t, stuckChild)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The control: the first signal began a stop that does not end.
	testkit.Await(t, 10*time.Second, "the child to say it is stopping", func() bool {
		return strings.Contains(c.stderr.String(), "signal again to end at once")
	})
	select {
	case err := <-c.exit:
		t.Fatalf("the child ended on the first signal (%v); stderr:\n%s", err, c.stderr.String())
	case <-time.After(time.Second):
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	c.awaitExit(t, 10*time.Second)
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("child ended as %v, want killed by the second SIGTERM", c.cmd.ProcessState)
	}
}

// startInTempDir starts the child in mode with a TMPDIR of its own, where
// envtest makes its data and certificate directories: every process with
// that directory in its command line is the child's. It returns once the
// child says "starting".
func startInTempDir(t *testing.T, mode string) (*child, string) {
	t.Helper()
	tmp := t.TempDir()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), exit: make(chan error, 1)}
	c.cmd.Env = append(os.Environ(), childEnv+"="+mode, "TMPDIR="+tmp)
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "starting\n" {
		t.Fatalf("child said %q (%v); stderr:\n%s", line, err, c.stderr.String())
	}
	go func() { c.exit <- c.cmd.Wait() }()
	return c, tmp
}

// interruptLeavingNothing sends the child SIGTERM and requires it to end
// as the signal ends a process, leaving no process and no file in tmp, and
// to have said control, which shows the signal met what the test set up.
func (c *child) interruptLeavingNothing(t *testing.T, tmp, control string) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.awaitExit(t, 3*time.Minute); code != 128+15 {
		t.Errorf("child ended with code %d, want 143 as a SIGTERM ending; stderr:\n%s", code, c.stderr.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	left := processesWith(tmp)
	for ; len(left) > 0 && time.Now().Before(deadline); left = processesWith(tmp) {
		time.Sleep(50 * time.Millisecond)
	}
	for pid, args := range left {
		t.Errorf("%d still runs after the child exited: %s", pid, args)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) > 0 {
		t.Errorf("the child left %d entries in its TMPDIR (%v)", len(entries), err)
	}
	if stderr := c.stderr.String(); !strings.Contains(stderr, control) {
		t.Errorf("the child never said %q: the signal missed what the test set up; stderr:\n%s", control, stderr)
	}
}

// running says whether a process of the binary called name has s in its
// command line.
func running(s, name string) bool {
	for _, args := range processesWith(s) {
		if filepath.Base(strings.Fields(args)[0]) == name {
			return true
		}
	}
	return false
}

// processesWith gives the command lines of the running processes with s in
// theirs, by pid.
func processesWith(s string) map[int]string {
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || exited(pid) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if args := strings.ReplaceAll(string(raw), "\x00", " "); err == nil && strings.Contains(args, s) {
			found[pid] = args
		}
	}
	return found
}

// TestTimeout_StopsTheControlPlaneBeforeThePanic: a test binary past its
// -test.timeout panics without running a cleanup; what it started must be
// stopped before that, and the timeout still reported as one.
func TestTimeout_StopsTheControlPlaneBeforeThePanic(t *testing.T) {
	t.Parallel() // each waits on a child of its own
	c := startChild(t, timedOutChild, "-test.run=^TestTimedOutChild_HangsUntilTheTimeout$", "-test.timeout=20s")
	code := c.awaitExit(t, 90*time.Second)
	stderr := c.stderr.String()
	if code != 2 || !strings.Contains(stderr, "panic: test timed out after 20s") {
		t.Errorf("child ended with code %d, want 2 and a timeout panic; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "kube: stopped 3 control planes, processes and temporary directories") {
		t.Errorf("the child never said it stopped its control plane, its process and its directory; stderr:\n%s", stderr)
	}
	c.requireAllGone(t)
}

// TestTimeoutMargin_ATenthOfTheTimeoutAndAMinuteAtMost pins how long
// before -test.timeout StopBeforeTimeout stops everything; the timeout test
// above runs the stop itself, with a margin of its own.
func TestTimeoutMargin_ATenthOfTheTimeoutAndAMinuteAtMost(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		20 * time.Second: 2 * time.Second,
		10 * time.Minute: time.Minute,
		40 * time.Minute: time.Minute,
	} {
		if got := timeoutMargin(timeout); got != want {
			t.Errorf("margin for %s: %s, want %s", timeout, got, want)
		}
	}
}

// child is this test binary, run again by a test in a mode of runChild.
type child struct {
	cmd     *exec.Cmd
	stderr  testkit.Logs // written by exec's copier while a failing test reads it
	exit    chan error
	started map[string]int // pids by command
	dirs    []string       // envtest's data directories and the TempDir
}

// startChild starts the child and reads what it started, which must be
// running, with kube-apiserver and etcd in process groups other than the
// child's: a signal to the child, or its end, does not reach them.
func startChild(t *testing.T, mode string, args ...string) *child {
	t.Helper()
	return startChildAs(t, mode, exec.Command(os.Args[0], args...))
}

// startChildIgnoringSIGINT starts the child as a shell without job control
// starts a background command: with SIGINT ignored, which exec keeps.
func startChildIgnoringSIGINT(t *testing.T, mode string, args ...string) *child {
	t.Helper()
	return startChildAs(t, mode, exec.Command("/bin/sh", append([]string{"-c", `trap "" INT; exec "$0" "$@"`, os.Args[0]}, args...)...))
}

// startChildAs is startChild running cmd, which runs this test binary.
func startChildAs(t *testing.T, mode string, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{cmd: cmd, exit: make(chan error, 1)}
	c.cmd.Env = append(os.Environ(), childEnv+"="+mode)
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		// The pipe is read to its end before Wait closes it.
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		c.exit <- c.cmd.Wait()
	}()
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })

	var apiserver, etcd, sleeper int
	var certDir, etcdDir, tmp string
	select {
	case line := <-lines:
		if _, err := fmt.Sscan(line, &apiserver, &etcd, &sleeper, &certDir, &etcdDir, &tmp); err != nil {
			t.Fatalf("child said %q (%v); stderr:\n%s", line, err, c.stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the child did not start its control plane within 3 minutes")
	}
	c.started = map[string]int{"kube-apiserver": apiserver, "etcd": etcd, "sleep": sleeper}
	c.dirs = []string{certDir, etcdDir, tmp}
	// Whatever the child leaves running fails the test, and is not left
	// running on this machine either.
	t.Cleanup(func() {
		// Only after a failure: a pid that ended may since name another
		// process.
		if !t.Failed() {
			return
		}
		for _, pid := range c.started {
			if !exited(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for name, pid := range c.started {
		if exited(pid) {
			t.Fatalf("%s (%d) is not running before the test's stimulus", name, pid)
		}
	}
	// The control: envtest puts its processes in groups of their own, so
	// neither a signal to the child nor its end reaches them.
	childGroup, err := syscall.Getpgid(c.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if g, err := syscall.Getpgid(c.started[name]); err != nil || g == childGroup {
			t.Fatalf("%s is in process group %d (%v), the child's own: the test would not show the cleanup", name, g, err)
		}
	}
	return c
}

// awaitExit waits for the child to end and returns its exit code.
func (c *child) awaitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-c.exit:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("wait for the child: %v", err)
		}
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("the child did not exit within %s; stderr:\n%s", within, c.stderr.String())
		return 0
	}
}

// requireAllGone fails unless everything the child started has ended and
// its directories are removed.
func (c *child) requireAllGone(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for name, pid := range c.started {
		for !exited(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !exited(pid) {
			t.Errorf("%s (%d) still runs after the child exited", name, pid)
		}
	}
	for _, dir := range c.dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is left behind (stat: %v)", dir, err)
			_ = os.RemoveAll(dir)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from linux/prctl.h: the
// orphans of a subreaper's descendants become its children instead of
// init's, so the test sees any process the demo left behind.
const prSetChildSubreaper = 36

// TestDemo_PlaysTheWholeStoryThenExitsZeroLeavingNothingRunning runs `make
// demo`'s program as a user would, with -fast and stdout not a terminal:
// every step of the story must be told done, the program must exit 0, no
// process it started (apiserver, etcd, observer, actors) may outlive it,
// its temporary files must be gone, and the plain output must carry no
// terminal escape codes.
func TestDemo_PlaysTheWholeStoryThenExitsZeroLeavingNothingRunning(t *testing.T) {
	root, err := kube.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := kube.Assets(root)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "demo")
	if err := kube.Build(root, "./test/cmd/demo", bin, true); err != nil {
		t.Fatal(err)
	}
	// The demo builds the two agents as they ship; building them once here
	// puts them in the build cache, so the deadline below times the story,
	// not a cold compile (2 min 42 s in a cold CI run beside the e2e suite).
	if _, _, err := kube.BuildAgents(root, t.TempDir(), false); err != nil {
		t.Fatal(err)
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		t.Fatalf("become a child subreaper: %v", errno)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 0, 0) })
	tmp, logs := filepath.Join(t.TempDir(), "tmp"), t.TempDir()
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}

	// The fast story takes about a minute on a loaded machine. A step may
	// take up to two (the e2e suite's bound for a healed worker's node to
	// go; in one cold CI run, beside both e2e suites, it stayed over a
	// minute), and one such step must still fit.
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-fast", "-logs", logs)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), kube.AssetsEnv+"="+assets, "TMPDIR="+tmp)
	// Past the deadline, Ctrl-C as a user would; the demo must still clean up.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Deferred, so every failure below, Fatal or not, shows what the demo
	// printed and logged; t.TempDir removes the logs only after this runs.
	defer func() {
		if t.Failed() {
			t.Logf("demo output:\n%s", out.String())
			logTails(t, logs)
		}
	}()
	runErr := cmd.Run()
	left := orphans(t)
	if runErr != nil {
		t.Fatalf("demo: %v (want exit 0)", runErr)
	}
	text := out.String()
	for i, title := range []string{
		"The platform scales a pool",
		"A worker dies and is healed",
		"A pool is upgraded node by node",
		"The actor is switched off; the observer keeps reporting",
	} {
		if want := fmt.Sprintf("Step %d of 4 done: %s", i+1, title); !strings.Contains(text, want) {
			t.Errorf("the output never says %q", want)
		}
	}
	for _, want := range []string{"The story is complete", "Done: everything the demo started is gone"} {
		if !strings.Contains(text, want) {
			t.Errorf("the output never says %q", want)
		}
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("output to a pipe carries terminal escape codes")
	}
	for _, p := range left {
		t.Errorf("left running after the demo exited: %s", p)
	}
	if entries, err := os.ReadDir(tmp); err != nil || len(entries) != 0 {
		t.Errorf("temporary files left behind in TMPDIR: %v (%v)", entries, err)
	}
}

// orphans lists, and then kills and reaps, the processes reparented to this
// test: whatever the demo started and left behind.
func orphans(t *testing.T) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, stat := range procs {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces, so cut at the last ')'.
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[end+1:])
		if end < 0 || len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		pid, _ := strconv.Atoi(strings.Fields(s)[0])
		left = append(left, fmt.Sprintf("pid %d %s state %s", pid, s[strings.IndexByte(s, '(')+1:end], fields[0]))
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
	}
	return left
}

// logTails prints the end of every log the demo wrote (the controllers', the
// agents'): t.TempDir removes them when the test ends, and a failed story is
// explained there, not in its output.
func logTails(t *testing.T, dir string) {
	t.Helper()
	const keep = 16 << 10
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		if len(b) > keep {
			b = b[len(b)-keep:]
		}
		t.Logf("last %d bytes of %s:\n%s", len(b), filepath.Base(name), b)
	}
}

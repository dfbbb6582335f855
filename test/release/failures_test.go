package release

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFailuresScript_NamesEachFailedCheckInAFewLines runs hack/failures.sh,
// which make test calls last on a failed run, on the end-to-end logs of one
// passing and one failing version: it names the failing version, its half,
// the failed test and each message's first line, and nothing of the
// post-mortem's thousands of lines or of the passing log.
func TestFailuresScript_NamesEachFailedCheckInAFewLines(t *testing.T) {
	dir := t.TempDir()
	passing := logFile(t, dir, "pass", "-- Heal, Upgrade and World tests\nPASS\n-- the other tests\nPASS\n")
	var failing strings.Builder
	failing.WriteString("-- Heal, Upgrade and World tests\nPASS\n-- the other tests\n")
	failing.WriteString("--- FAIL: TestActor_FrozenLeader (88.00s)\n")
	failing.WriteString("    actor_freeze_test.go:107: standby took the lease 14s after the freeze\n")
	failing.WriteString("    actor_freeze_test.go:145: the standby patched nothing after the freeze\n")
	failing.WriteString("    actor_test.go:55: --- kube-controller-manager\n")
	for i := range 5000 {
		fmt.Fprintf(&failing, "        I1205 12:00:00 controller line %d\n", i)
	}
	failing.WriteString("FAIL\n")
	out := runFailures(t, "Kubernetes 1.37", passing, "Kubernetes 1.35", logFile(t, dir, "fail", failing.String()))

	want := []string{
		"== failed: Kubernetes 1.35",
		"-- the other tests",
		"--- FAIL: TestActor_FrozenLeader (88.00s)",
		"    actor_freeze_test.go:107: standby took the lease 14s after the freeze",
		"    actor_freeze_test.go:145: the standby patched nothing after the freeze",
		"    actor_test.go:55: --- kube-controller-manager",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}
}

// TestFailuresScript_StopsAtThirtyLinesALog: a run where everything failed
// still ends in two screenfuls, one version's failures do not crowd out the
// other's, and the script's exit status stays 0 when it cuts.
func TestFailuresScript_StopsAtThirtyLinesALog(t *testing.T) {
	var log strings.Builder
	for i := range 500 {
		fmt.Fprintf(&log, "--- FAIL: TestN%d (1.00s)\n    x_test.go:%d: failed\n", i, i+1)
	}
	dir := t.TempDir()
	out := runFailures(t, "Kubernetes 1.37", logFile(t, dir, "a", log.String()), "Kubernetes 1.35", logFile(t, dir, "b", log.String()))
	if n := strings.Count(out, "\n"); n != 62 {
		t.Errorf("printed %d lines, want 62 (a heading and 30 lines for each log)", n)
	}
	for _, heading := range []string{"== failed: Kubernetes 1.37\n", "== failed: Kubernetes 1.35\n"} {
		if !strings.Contains(out, heading) {
			t.Errorf("no %q in:\n%s", heading, out)
		}
	}
}

// TestFailuresScript_NamesATimedOutTestAndARace: a timeout's panic names
// the tests still running on lines of their own, and a race fails a test
// through the testing package's line, not the test's.
func TestFailuresScript_NamesATimedOutTestAndARace(t *testing.T) {
	log := "--- FAIL: TestRacy (2.00s)\n    testing.go:1712: race detected during execution of test\n" +
		"panic: test timed out after 30m0s\n\trunning tests:\n\t\tTestActor_FrozenLeader (29m59s)\n\ngoroutine 1 [running]:\nFAIL\n"
	out := runFailures(t, "Kubernetes 1.37", logFile(t, t.TempDir(), "a", log))
	for _, want := range []string{"testing.go:1712: race detected", "panic: test timed out after 30m0s", "\t\tTestActor_FrozenLeader (29m59s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "goroutine 1") {
		t.Errorf("the goroutine dump was printed:\n%s", out)
	}
}

// TestFailuresScript_AFailureItCannotNameShowsTheLogsEnd: a binary that
// failed before any test (its control plane did not start) names no test;
// the end of its log is what explains it.
func TestFailuresScript_AFailureItCannotNameShowsTheLogsEnd(t *testing.T) {
	var log strings.Builder
	for i := range 20 {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	log.WriteString("start the control plane: etcd did not start\nFAIL\n")
	dir := t.TempDir()
	out := runFailures(t, "Kubernetes 1.37", logFile(t, dir, "pass", "PASS\n"), "Kubernetes 1.35", logFile(t, dir, "fail", log.String()))
	want := "== failed: Kubernetes 1.35 (last lines)\n"
	for i := 12; i < 20; i++ {
		want += fmt.Sprintf("line %d\n", i)
	}
	want += "start the control plane: etcd did not start\nFAIL\n"
	if out != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out, want)
	}
}

// logFile writes text to dir/name and returns the path.
func logFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	write(t, path, text)
	return path
}

func runFailures(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root(t), "hack", "failures.sh"), args...).Output()
	if err != nil {
		t.Fatalf("hack/failures.sh: %v", err)
	}
	return string(out)
}

// TestMakefile_AFailedTestRunEndsWithItsFailures: make test's recipe, once
// both end-to-end logs are printed, runs hack/failures.sh on both when the
// run failed, and exits with the tests' status after it.
func TestMakefile_AFailedTestRunEndsWithItsFailures(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := regexp.MustCompile(`(?ms)^test:\n((?:\t[^\n]*\n)+)`).FindStringSubmatch(string(b))
	if recipe == nil {
		t.Fatal("no test recipe in the Makefile")
	}
	lines := strings.Split(strings.TrimSpace(recipe[1]), "\n")
	if n := len(lines); n < 3 ||
		!strings.Contains(lines[n-3], `cat "$$logs/e2e-1.35"`) ||
		!strings.Contains(lines[n-2], `[ $$status = 0 ] || hack/failures.sh "Kubernetes 1.37" "$$logs/e2e" "Kubernetes 1.35" "$$logs/e2e-1.35"`) ||
		strings.TrimSpace(lines[n-1]) != "exit $$status" {
		t.Errorf("make test does not end by printing the logs, then their failures, then exiting with the tests' status:\n%s", recipe[1])
	}
}

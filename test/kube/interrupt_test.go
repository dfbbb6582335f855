package kube

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

const interruptedChildEnv = "KUBEHZ_TEST_INTERRUPTED_CHILD"

// interruptedChild is this test binary run again by
// TestInterrupt_StopsTheControlPlaneAndTheProcessesItStarted: it starts a
// control plane and a process, prints what it started on one line, and
// waits to be signalled (ten minutes at most).
func interruptedChild() {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	env, err := Start(Options{})
	if err != nil {
		fail(err)
	}
	sleeper, err := StartProcess("/bin/sleep", nil, "600")
	if err != nil {
		fail(err)
	}
	etcdDir := env.env.ControlPlane.Etcd.DataDir
	apiserver, _, _, err := env.apiserverProcess()
	if err != nil {
		fail(err)
	}
	etcd, _, _, err := findProcess("etcd", "--data-dir="+etcdDir)
	if err != nil {
		fail(err)
	}
	fmt.Println(apiserver, etcd, sleeper.Pid(), env.env.ControlPlane.APIServer.CertDir, etcdDir)
	time.Sleep(10 * time.Minute)
	os.Exit(1)
}

// TestInterrupt_StopsTheControlPlaneAndTheProcessesItStarted: make test
// stops a failed run's test binaries with SIGTERM, as a terminal's Ctrl-C
// stops them with SIGINT; whatever they started must go with them, and
// envtest's data directories too.
func TestInterrupt_StopsTheControlPlaneAndTheProcessesItStarted(t *testing.T) {
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), interruptedChildEnv+"=1")
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines, exit := make(chan string, 1), make(chan error, 1)
	go func() {
		// The pipe is read to its end before Wait closes it.
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		exit <- child.Wait()
	}()
	t.Cleanup(func() { _ = child.Process.Kill() })

	var apiserver, etcd, sleeper int
	var certDir, etcdDir string
	select {
	case line := <-lines:
		if _, err := fmt.Sscan(line, &apiserver, &etcd, &sleeper, &certDir, &etcdDir); err != nil {
			t.Fatalf("child said %q (%v); stderr:\n%s", line, err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the child did not start its control plane within 3 minutes")
	}
	started := map[string]int{"kube-apiserver": apiserver, "etcd": etcd, "sleep": sleeper}
	// Whatever the child leaves running fails the test, and is not left
	// running on this machine either.
	t.Cleanup(func() {
		// Only after a failure: a pid that ended may since name another
		// process.
		if !t.Failed() {
			return
		}
		for _, pid := range started {
			if !exited(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	for name, pid := range started {
		if exited(pid) {
			t.Fatalf("%s (%d) is not running before the signal", name, pid)
		}
	}
	// The control: envtest puts its processes in groups of their own, so
	// the signal that reaches the test binary does not reach them.
	childGroup, err := syscall.Getpgid(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if g, err := syscall.Getpgid(started[name]); err != nil || g == childGroup {
			t.Fatalf("%s is in process group %d (%v), the child's own: the test would not show the cleanup", name, g, err)
		}
	}

	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exit:
		if code := child.ProcessState.ExitCode(); code != 128+15 {
			t.Errorf("child ended with %v (code %d), want code 143 as a SIGTERM ending; stderr:\n%s", err, code, stderr.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the child did not exit within 90 s of SIGTERM")
	}
	deadline := time.Now().Add(10 * time.Second)
	for name, pid := range started {
		for !exited(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !exited(pid) {
			t.Errorf("%s (%d) still runs after the child exited", name, pid)
		}
	}
	for _, dir := range []string{certDir, etcdDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s is left behind (stat: %v)", dir, err)
			_ = os.RemoveAll(dir)
		}
	}
}

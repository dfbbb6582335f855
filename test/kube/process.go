package kube

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Build compiles a workspace main package (e.g. "./observer") into out.
// Tests build with the race detector so the binaries run under it too.
// Without it the binary is built as make build and the Dockerfiles build
// what ships (static, trimmed, stripped): the benchmark measures memory, and
// a cgo binary maps libc and carries a symbol table the image does not, which
// added about 1.5 MiB of RSS to every figure.
func Build(root, pkg, out string, race bool) error {
	args := []string{"build", "-o", out}
	env := os.Environ()
	if race {
		args = append(args, "-race")
	} else {
		args = append(args, "-trimpath", "-ldflags=-s -w")
		env = append(env, "CGO_ENABLED=0")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// Process is one running agent binary with its stderr captured.
type Process struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	done   chan struct{}
	err    error
	killed bool
}

// StartProcess runs bin with exactly env (nothing inherited but PATH and
// HOME, so the test controls every setting the binary reads).
func StartProcess(bin string, env []string, args ...string) (*Process, error) {
	return StartProcessTee(bin, env, nil, args...)
}

// StartProcessTee is StartProcess that also copies the output to tee.
func StartProcessTee(bin string, env []string, tee io.Writer, args ...string) (*Process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	buf := &lockedBuffer{}
	var out io.Writer = buf
	if tee != nil {
		out = io.MultiWriter(buf, tee)
	}
	cmd.Stdout, cmd.Stderr = out, out
	forget, err := launch(filepath.Base(bin), cmd.Start, func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	p := &Process{cmd: cmd, out: buf, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		forget()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Output is everything the process wrote so far.
func (p *Process) Output() string { return p.out.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its code.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	// An ended process wins outright: with both channels ready a select
	// picks at random, and Wait(0) on an exited process would report it
	// still running half the time.
	select {
	case <-p.done:
	default:
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-p.done:
		case <-timer.C:
			return -1, fmt.Errorf("still running after %s", timeout)
		}
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, p.err
}

// Stop sends SIGTERM, waits up to timeout, then kills. It returns the exit
// code of a clean stop, or an error when the process had to be killed.
func (p *Process) Stop(timeout time.Duration) (int, error) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	code, err := p.Wait(timeout)
	if err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
		return -1, fmt.Errorf("did not stop within %s after SIGTERM; killed", timeout)
	}
	return code, nil
}

// Quit sends SIGQUIT, on which a Go program writes its goroutines' stacks
// to stderr and exits, and waits up to timeout for that; then it kills.
func (p *Process) Quit(timeout time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	if _, err := p.Wait(timeout); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Freeze stops the process where it stands (SIGSTOP), as a starved
// scheduler, a debugger or a paused VM would; Thaw (SIGCONT) resumes it.
// A frozen process acts on no other signal until it is thawed.
func (p *Process) Freeze() error { return p.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen process.
func (p *Process) Thaw() error { return p.cmd.Process.Signal(syscall.SIGCONT) }

// Kill ends the process at once, as a crash or an OOM kill would.
func (p *Process) Kill() {
	p.killed = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Killed reports whether the test killed the process on purpose, or took
// charge of its end with Ended.
func (p *Process) Killed() bool { return p.killed }

// Ended tells cleanup that the test has checked how the process ended (it
// was meant to exit on its own), so there is nothing left to stop.
func (p *Process) Ended() { p.killed = true }

// RSS is the process' resident set size in bytes, from /proc.
func (p *Process) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", p.Pid()))
	if err != nil {
		return 0, err
	}
	var size, resident int64
	if _, err := fmt.Sscan(string(b), &size, &resident); err != nil {
		return 0, err
	}
	return resident * int64(os.Getpagesize()), nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// Bounded: a chatty binary must not grow the test's memory without end.
	if b.buf.Len() > 8<<20 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

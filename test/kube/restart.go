package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RestartAPIServer stops the running kube-apiserver (SIGTERM, then SIGKILL
// after 5 s: its graceful drain can take a minute), keeps it down for down,
// and starts it again with the very same command line, so its certificates,
// ServiceAccount keys and etcd stay the clients' own. It returns once the
// new process answers /readyz.
func (e *Env) RestartAPIServer(ctx context.Context, down time.Duration) error {
	pid, args, environ, err := e.apiserverProcess()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop kube-apiserver %d: %w", pid, err)
	}
	for term := time.Now(); !exited(pid); time.Sleep(50 * time.Millisecond) {
		if ctx.Err() != nil {
			return fmt.Errorf("kube-apiserver %d did not exit: %w", pid, ctx.Err())
		}
		if time.Since(term) > 5*time.Second {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	if err := e.relaunch(args, environ); err != nil {
		return err
	}
	for {
		if body, err := e.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err == nil && bytes.Equal(body, []byte("ok")) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("restarted kube-apiserver not ready: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// relaunch starts kube-apiserver again, unless the control plane was
// stopped meanwhile: nothing would stop that one.
func (e *Env) relaunch(args, environ []string) error {
	e.procs.Lock()
	defer e.procs.Unlock()
	if e.stopped {
		return errors.New("restart kube-apiserver: the control plane was stopped")
	}
	cmd := exec.Command(args[0], args[1:]...)
	// Its output is dropped, as envtest drops the first one's: a log file
	// in the temporary directory outlived every run.
	cmd.Env = environ
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("restart kube-apiserver: %w", err)
	}
	e.restarted = append(e.restarted, cmd)
	go func() { _ = cmd.Wait() }()
	return nil
}

// apiserverProcess finds this Env's kube-apiserver by its secure port.
func (e *Env) apiserverProcess() (int, []string, []string, error) {
	u, err := url.Parse(e.Config.Host)
	if err != nil {
		return 0, nil, nil, err
	}
	return findProcess("kube-apiserver", "--secure-port="+u.Port())
}

// findProcess finds the running process of the binary called name that has
// arg among its arguments, and gives its pid, arguments and environment.
func findProcess(name, arg string) (int, []string, []string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, nil, nil, err
	}
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || exited(pid) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) != name || !slices.Contains(args, arg) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil {
			return 0, nil, nil, err
		}
		return pid, args, strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00"), nil
	}
	return 0, nil, nil, fmt.Errorf("no %s process with %s", name, arg)
}

// exited reports whether pid is gone or a zombie waiting to be reaped.
func exited(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// CompactEtcd compacts etcd's history up to its current revision through
// etcd's JSON gateway, as the apiserver's periodic compaction would once it
// caught up: every watch resumed from an older resourceVersion then fails
// with 410 Gone and its informer must relist.
func (e *Env) CompactEtcd(ctx context.Context) (int64, error) {
	var head struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// Any range answers with the store's current revision in its header.
	if err := e.etcdCall(ctx, http.MethodPost, "/v3/kv/range", `{"key":"AA==","limit":1}`, &head); err != nil {
		return 0, err
	}
	rev, err := strconv.ParseInt(head.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("etcd revision %q: %w", head.Header.Revision, err)
	}
	body := fmt.Sprintf(`{"revision":"%d","physical":true}`, rev)
	if err := e.etcdCall(ctx, http.MethodPost, "/v3/kv/compaction", body, nil); err != nil {
		return 0, err
	}
	return rev, nil
}

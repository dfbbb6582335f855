// Package kube runs a real kube-apiserver and etcd for the integration tests
// and the demo, and offers the few cluster chores they share: applying the
// deploy/ manifests, minting ServiceAccount kubeconfigs, building and running
// the agent binaries.
package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// AssetsEnv names the directory holding kube-apiserver and etcd. The Makefile
// sets it; without it the harness builds (or finds cached) binaries itself.
const AssetsEnv = "KUBEHZ_TEST_ASSETS"

// The pinned control plane, as hack/controlplane.sh builds it (a unit test
// keeps the two in step). Start refuses to hand out a control plane that
// reports anything else, so no asset override can swap it silently.
const (
	KubeVersion = "v1.37.2"
	EtcdVersion = "3.7.3"
)

// KubeVersionEnv chooses, deliberately, another pinned apiserver for a
// compatibility run (`make test-k8s-1.35`); its assets must report it.
const KubeVersionEnv = "KUBEHZ_TEST_KUBE_VERSION"

// compatible are the other apiservers the suite is run against.
var compatible = map[string]bool{"v1.35.8": true}

// WantKubeVersion is the apiserver version this run must report.
func WantKubeVersion() (string, error) {
	v := os.Getenv(KubeVersionEnv)
	switch {
	case v == "" || v == KubeVersion:
		return KubeVersion, nil
	case compatible[v]:
		return v, nil
	}
	return "", fmt.Errorf("%s=%s is not a pinned control plane", KubeVersionEnv, v)
}

// Env is one running control plane.
type Env struct {
	Config *rest.Config // system:masters; for test setup and checks only
	Client kubernetes.Interface
	Root   string // repository root

	env       *envtest.Environment
	assets    string      // the pinned control plane's binaries
	restarted []*exec.Cmd // kube-apiservers started by RestartAPIServer
	forget    func()      // drops Stop from what an interrupt stops; kept under procs
	// procs is held while a restarted apiserver is launched and while the
	// control plane stops, so that nothing is launched after the stop.
	procs   sync.Mutex
	stopped bool
	stopErr error
}

// Options tune the control plane.
type Options struct {
	// APIServerArgs are extra kube-apiserver flags, name → values.
	APIServerArgs map[string][]string
	// EtcdArgs are extra etcd flags, name → values.
	EtcdArgs map[string][]string
}

// Start boots etcd and kube-apiserver on loopback ports.
func Start(opts Options) (*Env, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := Assets(root)
	if err != nil {
		return nil, err
	}
	// envtest logs through controller-runtime's logger; the harness has
	// nothing to say through it, and an unset logger prints a warning.
	ctrllog.SetLogger(logr.Discard())
	never := false
	te := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// USE_EXISTING_CLUSTER must not point the tests at another cluster.
		UseExistingCluster: &never,
		// A cold apiserver on a loaded 2-core machine can take a while.
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// Explicit paths: envtest would otherwise prefer TEST_ASSET_* and
	// KUBEBUILDER_ASSETS from the environment over the pinned build.
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	for name, values := range opts.EtcdArgs {
		te.ControlPlane.Etcd.Configure().Set(name, values...)
	}
	api := te.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(assets, "kube-apiserver")
	for name, values := range opts.APIServerArgs {
		api.Configure().Set(name, values...)
	}
	e := &Env{Root: root, env: te, assets: assets}
	// Registered before the start, which is where an interrupt most often
	// lands: a cold apiserver can take a minute to come up.
	forget, err := launch("a control plane", func() (err error) {
		e.Config, err = te.Start()
		return err
	}, func() { _ = e.Stop() })
	e.procs.Lock()
	e.forget = forget
	e.procs.Unlock()
	if err != nil {
		// envtest stops what it started when the control plane itself
		// fails, but not when a later step does (the admin user, the
		// kubeconfig): etcd and the apiserver would then run on.
		_ = e.Stop()
		return nil, fmt.Errorf("start control plane from %s: %w", assets, err)
	}
	if e.Client, err = kubernetes.NewForConfig(e.Config); err == nil {
		err = e.checkVersions()
	}
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// checkVersions asks the running apiserver and etcd what they are.
func (e *Env) checkVersions() error {
	want, err := WantKubeVersion()
	if err != nil {
		return err
	}
	v, err := e.Client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("apiserver version: %w", err)
	}
	etcd, err := e.EtcdVersion()
	if err != nil {
		return err
	}
	if v.GitVersion != want || etcd != EtcdVersion {
		return fmt.Errorf("control plane is kube-apiserver %s with etcd %s, want the pinned %s with %s",
			v.GitVersion, etcd, want, EtcdVersion)
	}
	return nil
}

// EtcdVersion is the running etcd's own answer on its /version endpoint.
func (e *Env) EtcdVersion() (string, error) {
	var v struct {
		Server string `json:"etcdserver"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.etcdCall(ctx, http.MethodGet, "/version", "", &v); err != nil {
		return "", err
	}
	return v.Server, nil
}

// etcdCall sends one request to etcd's HTTP endpoint (its JSON gateway, or
// /version) and decodes the answer into out, if set.
func (e *Env) etcdCall(ctx context.Context, method, path, body string, out any) error {
	u := *e.env.ControlPlane.Etcd.URL
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("etcd %s: %w", path, err)
	}
	return nil
}

// Stop shuts the control plane down and removes its data. After a
// RestartAPIServer the original apiserver process is already gone, which
// envtest reports as an error; the restarted one is stopped here. Only the
// first call stops: StopBeforeTimeout may have stopped it while a test
// still ran, and the test's own Stop comes after.
// An interrupt during the start waits for it (launch): envtest's Stop
// skips a process it has not launched yet, and the start, running on
// beside it, launched that process afterwards.
func (e *Env) Stop() error {
	e.procs.Lock()
	defer e.procs.Unlock()
	if !e.stopped {
		e.stopped, e.stopErr = true, e.stop()
	}
	return e.stopErr
}

func (e *Env) stop() error {
	// nil only for an interrupt's stop that ran as the start ended, before
	// Start kept forget; the binary exits right after it.
	if e.forget != nil {
		defer e.forget()
	}
	for _, cmd := range e.restarted {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range e.restarted {
		for deadline := time.Now().Add(30 * time.Second); !exited(cmd.Process.Pid) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	err := e.env.Stop()
	if len(e.restarted) > 0 {
		return nil
	}
	return err
}

// RepoRoot walks up from the working directory to the go.work file.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.work above the working directory")
		}
		dir = parent
	}
}

// Assets returns the directory with kube-apiserver and etcd, building them
// through hack/controlplane.sh when no cached copy exists yet.
func Assets(root string) (string, error) {
	if dir := os.Getenv(AssetsEnv); dir != "" {
		return dir, nil
	}
	var args []string
	if want, err := WantKubeVersion(); err != nil {
		return "", err
	} else if want != KubeVersion {
		args = append(args, strings.TrimPrefix(want[:strings.LastIndex(want, ".")], "v"))
	}
	cmd := exec.Command(filepath.Join(root, "hack", "controlplane.sh"), args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("hack/controlplane.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

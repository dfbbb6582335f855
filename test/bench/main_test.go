// Package bench is the scale harness: the built observer and two actor
// replicas run as processes under their own ServiceAccounts, with exactly the
// RBAC and settings of deploy/, against a real kube-apiserver holding
// clusters of growing size. It prints, per size, how fast the cluster was
// populated, how long the observer took to its first beat that counted
// everything, each process' resident memory and CPU over a steady window,
// and every request each binary made, from the apiserver's audit log. A LIST
// in the steady window is a defect and fails the benchmark.
//
// The package holds benchmarks only; `go test` without -bench starts
// nothing. `make bench` and `make bench-large` run it.
package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"testing"

	"go.uber.org/goleak"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/test/kube"
)

// auditPolicy records the metadata of the agent's own requests only: the
// harness' hundreds of thousands of writes would make the log, and the
// apiserver's blocking writes to it, the bottleneck of populating.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["` + kube.ObserverUser + `", "` + kube.ActorUser + `"]
  - level: None
`

// harness is the control plane every size shares, started by the benchmark
// and stopped by TestMain.
var harness struct {
	once      sync.Once
	err       error
	dir       string
	removeDir func()
	env       *kube.Env
	// admin is system:masters over protobuf and unthrottled: populating is
	// bound by the apiserver, not the client. dyn writes the CRD objects,
	// which only speak JSON.
	admin kubernetes.Interface
	dyn   dynamic.Interface
	// Built without -race: resident memory and CPU are the point.
	observerBin, actorBin               string
	observerKubeconfig, actorKubeconfig string
	auditLog                            string
	kubeVersion                         string
	deployed                            deployed
	// baseline ignores the harness' own client goroutines; anything a
	// benchmark starts beyond them must be gone by the end.
	baseline goleak.Option
	// held is what the cluster holds so far; it only grows.
	held held
}

func TestMain(m *testing.M) {
	disarm := kube.StopBeforeTimeout()
	code := m.Run()
	disarm()
	// The control plane goes first: the clients' connections to it and the
	// restarted apiserver's reaper end with it, and are the harness', not a
	// benchmark's.
	if harness.env != nil {
		if err := harness.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}
	if harness.baseline != nil && code == 0 {
		if err := goleak.Find(harness.baseline); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	if harness.removeDir != nil {
		harness.removeDir()
	}
	os.Exit(code)
}

// startHarness records each part as it comes up, so TestMain can stop what
// a failed start left behind.
func startHarness() error {
	dir, remove, err := kube.TempDir("kubehz-bench-")
	if err != nil {
		return err
	}
	harness.dir, harness.removeDir = dir, remove
	audit, log, err := kube.AuditFlags(dir, auditPolicy)
	if err != nil {
		return err
	}
	harness.auditLog = log
	// No rotation (the default rotates at 100 MB) under the reader's feet.
	audit["audit-log-maxsize"] = []string{"100000"}
	env, err := kube.Start(kube.Options{APIServerArgs: audit, EtcdArgs: map[string][]string{
		// 150,000 pods with their status writes outgrow etcd's default 2 GiB
		// quota ("mvcc: database space exceeded"); a real cluster that size
		// runs with a larger one too.
		"quota-backend-bytes": {"8589934592"},
	}})
	if err != nil {
		return err
	}
	harness.env = env
	if harness.deployed, err = deployedEnv(env.Root); err != nil {
		return err
	}
	if harness.observerBin, harness.actorBin, err = kube.BuildAgents(env.Root, dir, false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if harness.observerKubeconfig, harness.actorKubeconfig, err = env.DeployAgents(ctx, dir); err != nil {
		return err
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	if harness.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if harness.admin, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	// One request first, so the clients' connection exists before the
	// baseline is taken.
	v, err := harness.admin.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	harness.kubeVersion = v.GitVersion
	harness.baseline = goleak.IgnoreCurrent()
	return nil
}

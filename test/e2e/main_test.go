// Package e2e runs the built agent binaries against a real kube-apiserver and
// etcd, under their own ServiceAccounts with exactly the RBAC in deploy/,
// talking to the platform simulator.
package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
)

// suite is what every test in this package shares: one control plane with
// deploy/observer applied, and the observer binary built with -race.
var suite struct {
	env                *kube.Env
	observerBin        string
	observerKubeconfig string
	actorBin           string
	actorKubeconfig    string
	auditLog           string
	dir                string
}

// auditPolicy records every request's metadata, so tests can prove which
// identity wrote what, and when (the kill switch, leadership terms).
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
`

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		code = 1
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	dir, remove, err := kube.TempDir("kubehz-e2e-")
	if err != nil {
		return 0, err
	}
	defer remove()
	suite.dir = dir

	audit, log, err := kube.AuditFlags(dir, auditPolicy)
	if err != nil {
		return 0, err
	}
	suite.auditLog = log
	env, err := kube.Start(kube.Options{APIServerArgs: audit})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}()
	suite.env = env

	if suite.observerBin, suite.actorBin, err = kube.BuildAgents(env.Root, dir, true); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if suite.observerKubeconfig, suite.actorKubeconfig, err = env.DeployAgents(ctx, dir); err != nil {
		return 0, err
	}
	// Goroutines of the control-plane clients started above are expected;
	// anything the tests start beyond them must be gone when they finish.
	code := kube.RunLeakChecked(m)
	// Whatever tests ran, the simulator wrote none of machine-controller's
	// resources in any of them.
	events, err := kube.ReadAudit(log, 0)
	if err != nil {
		return 0, err
	}
	if writes := simulatorMachineWrites(events, time.Time{}); len(writes) > 0 {
		fmt.Fprintln(os.Stderr, "the simulator wrote machine-controller's resources:", writes)
		code = 1
	}
	return code, nil
}

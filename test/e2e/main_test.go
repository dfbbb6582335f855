// Package e2e runs the built agent binaries against a real kube-apiserver and
// etcd, under their own ServiceAccounts with exactly the RBAC in deploy/,
// talking to the platform simulator.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

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
	dir, err := os.MkdirTemp("", "kubehz-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	suite.dir = dir

	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return 0, err
	}
	suite.auditLog = filepath.Join(dir, "audit.log")
	env, err := kube.Start(kube.Options{APIServerArgs: map[string][]string{
		"audit-policy-file": {policy}, "audit-log-path": {suite.auditLog}, "audit-log-mode": {"blocking"},
	}})
	if err != nil {
		return 0, err
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the control plane:", err)
		}
	}()
	suite.env = env

	suite.observerBin = filepath.Join(dir, "observer")
	if err := kube.Build(env.Root, "./observer", suite.observerBin, true); err != nil {
		return 0, err
	}
	suite.actorBin = filepath.Join(dir, "actor")
	if err := kube.Build(env.Root, "./actor", suite.actorBin, true); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The managed tier: the observer's objects plus the actor's.
	if _, err := env.ApplyKustomization(ctx, filepath.Join(env.Root, "deploy", "actor")); err != nil {
		return 0, err
	}
	suite.observerKubeconfig = filepath.Join(dir, "observer.kubeconfig")
	if err := env.ServiceAccountKubeconfig(ctx, "kubehz-system", "kubehz-observer", suite.observerKubeconfig); err != nil {
		return 0, err
	}
	suite.actorKubeconfig = filepath.Join(dir, "actor.kubeconfig")
	if err := env.ServiceAccountKubeconfig(ctx, "kubehz-system", "kubehz-actor", suite.actorKubeconfig); err != nil {
		return 0, err
	}
	// Goroutines of the control-plane clients started above are expected;
	// anything the tests start beyond them must be gone when they finish.
	baseline := goleak.IgnoreCurrent()
	code := m.Run()
	if code == 0 {
		// client-go shares one transport per config across the tests' own
		// clients; its idle HTTP/2 connections keep a read loop until the
		// control plane goes away. Those are the harness's, not the agent's
		// (the agent runs in separate processes).
		if err := goleak.Find(baseline, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code, nil
}

package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/goleak"

	"kubehz.dev/agent/test/platformsim"
)

// The namespace and ServiceAccounts deploy/ gives the two binaries.
const (
	AgentNamespace         = "kubehz-system"
	ObserverServiceAccount = "kubehz-observer"
	ActorServiceAccount    = "kubehz-actor"
)

// BuildAgents builds the observer and the actor into dir, with the race
// detector or as they ship (see Build).
func BuildAgents(root, dir string, race bool) (observer, actor string, err error) {
	observer, actor = filepath.Join(dir, "observer"), filepath.Join(dir, "actor")
	if err := Build(root, "./observer", observer, race); err != nil {
		return "", "", err
	}
	if err := Build(root, "./actor", actor, race); err != nil {
		return "", "", err
	}
	return observer, actor, nil
}

// DeployAgents applies deploy/actor, the managed tier (the observer's
// objects plus the actor's, among them the actor Deployment its kill switch
// watches), and writes into dir a kubeconfig for each binary's
// ServiceAccount, so each runs with exactly the RBAC deploy/ gives it.
func (e *Env) DeployAgents(ctx context.Context, dir string) (observerKubeconfig, actorKubeconfig string, err error) {
	if _, err := e.ApplyKustomization(ctx, filepath.Join(e.Root, "deploy", "actor")); err != nil {
		return "", "", err
	}
	observerKubeconfig = filepath.Join(dir, "observer.kubeconfig")
	if err := e.ServiceAccountKubeconfig(ctx, AgentNamespace, ObserverServiceAccount, observerKubeconfig); err != nil {
		return "", "", err
	}
	actorKubeconfig = filepath.Join(dir, "actor.kubeconfig")
	if err := e.ServiceAccountKubeconfig(ctx, AgentNamespace, ActorServiceAccount, actorKubeconfig); err != nil {
		return "", "", err
	}
	return observerKubeconfig, actorKubeconfig, nil
}

// AgentEnv is what a pod of either binary is given beside deploy/'s
// ConfigMaps: the platform it reports to (the simulator's cluster), the
// token Secret's mount, in-cluster credentials (here a kubeconfig of the
// binary's own ServiceAccount), the liveness file on its emptyDir and, for
// an actor replica, its pod name from the downward API.
type AgentEnv struct {
	PlatformURL  string
	TokenFile    string
	Kubeconfig   string
	LivenessFile string // left unset when empty
	Pod          string // POD_NAME; left unset when empty
}

// List is the environment for StartProcess, followed by extra; of a key set
// twice, the later value wins.
func (a AgentEnv) List(extra ...string) []string {
	env := []string{
		"CLUSTER_ID=" + platformsim.DefaultClusterID,
		"KUBEHZ_API_URL=" + a.PlatformURL,
		"KUBEHZ_AGENT_TOKEN_FILE=" + a.TokenFile,
		"KUBECONFIG=" + a.Kubeconfig,
	}
	if a.LivenessFile != "" {
		env = append(env, "KUBEHZ_LIVENESS_FILE="+a.LivenessFile)
	}
	if a.Pod != "" {
		env = append(env, "POD_NAME="+a.Pod)
	}
	return append(env, extra...)
}

// RunLeakChecked runs a test package's tests and fails a passing run that
// leaves goroutines beyond those running before it. client-go shares one
// transport per config across the tests' own clients, and its idle HTTP/2
// connections keep a read loop until the control plane goes away: those are
// the harness's, not the agent's, which runs in processes of its own.
func RunLeakChecked(m interface{ Run() int }) int {
	baseline := goleak.IgnoreCurrent()
	disarm := StopBeforeTimeout()
	code := m.Run()
	disarm()
	if code == 0 {
		if err := goleak.Find(baseline, goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			return 1
		}
	}
	return code
}

// Command demo runs kubehz-agent locally end to end: a real kube-apiserver and
// etcd, the platform simulator, a small simulated cluster, and the observer
// binary under its own ServiceAccount with the RBAC from deploy/observer. It
// prints every beat the platform receives until Ctrl-C, then cleans up.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	say("Starting a real kube-apiserver v1.37.2 and etcd on loopback")
	env, err := kube.Start(kube.Options{})
	if err != nil {
		return err
	}
	defer func() {
		say("Stopping the control plane")
		_ = env.Stop()
	}()
	dir, err := os.MkdirTemp("", "kubehz-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	say("Applying deploy/actor: the observer and the actor, with their ServiceAccounts and RBAC")
	setup, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := env.ApplyKustomization(setup, filepath.Join(env.Root, "deploy", "actor")); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "observer.kubeconfig")
	if err := env.ServiceAccountKubeconfig(setup, "kubehz-system", "kubehz-observer", kubeconfig); err != nil {
		return err
	}
	actorKubeconfig := filepath.Join(dir, "actor.kubeconfig")
	if err := env.ServiceAccountKubeconfig(setup, "kubehz-system", "kubehz-actor", actorKubeconfig); err != nil {
		return err
	}
	say("Creating a small simulated cluster: 1 control-plane node, 3 workers, a shop with pods")
	c := &cluster{client: env.Client}
	if err := c.seed(setup); err != nil {
		return err
	}
	say("Starting the machine-controller simulator with pool workers-a (2 machines)")
	world, stopWorld, err := startMachines(ctx, env)
	if err != nil {
		return err
	}
	defer stopWorld()

	sim := platformsim.New(platformsim.Options{OnRequest: printBeat})
	if err := sim.SetDesired(desired{rev: 1, replicas: 2}.doc(), `"1-100"`); err != nil {
		return err
	}
	url, err := sim.Start()
	if err != nil {
		return err
	}
	defer sim.Close()
	say("Platform simulator listening on %s", url)

	bin := filepath.Join(dir, "observer")
	say("Building the observer and the actor")
	if err := kube.Build(env.Root, "./observer", bin, false); err != nil {
		return err
	}
	actorBin := filepath.Join(dir, "actor")
	if err := kube.Build(env.Root, "./actor", actorBin, false); err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "agent-token")
	if err := os.WriteFile(tokenFile, []byte(platformsim.DefaultToken+"\n"), 0o600); err != nil {
		return err
	}
	logPath := filepath.Join(env.Root, ".demo", "observer.log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	obs, err := kube.StartProcessTee(bin, []string{
		"CLUSTER_ID=" + platformsim.DefaultClusterID,
		"KUBEHZ_API_URL=" + url,
		"KUBEHZ_AGENT_TOKEN_FILE=" + tokenFile,
		"KUBECONFIG=" + kubeconfig,
		"KUBEHZ_FULL_INTERVAL=20s",
		"KUBEHZ_DEBOUNCE=2s",
		"KUBEHZ_MIN_GAP=3s",
		"KUBEHZ_LIVENESS_FILE=" + filepath.Join(env.Root, ".demo", "observer.alive"),
	}, logFile)
	if err != nil {
		return err
	}
	say("Observer running as system:serviceaccount:kubehz-system:kubehz-observer (logs: %s)", logPath)
	actors, err := startActors(env.Root, actorBin, url, tokenFile, actorKubeconfig)
	if err != nil {
		return err
	}
	defer stopActors(actors)
	say("Two actor replicas running as system:serviceaccount:kubehz-system:kubehz-actor; one leads (logs: .demo/actor-*.log)")
	say("Every beat the platform accepts is printed below. Ctrl-C to stop.")

	c.story(ctx, obs, sim, world)

	say("Stopping the observer")
	code, stopErr := obs.Stop(15 * time.Second)
	if stopErr != nil {
		return stopErr
	}
	say("Observer exited with status %d", code)
	return nil
}

func say(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

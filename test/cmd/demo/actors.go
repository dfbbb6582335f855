package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
)

// startMachines installs machine-controller's CRDs and runs the simulator
// that plays it, with one worker pool.
func startMachines(ctx context.Context, env *kube.Env) (world *clustersim.Sim, stop func(), err error) {
	var paths []string
	for _, f := range []string{"cluster.k8s.io_machinedeployments.yaml", "cluster.k8s.io_machinesets.yaml", "cluster.k8s.io_machines.yaml"} {
		paths = append(paths, env.CRDPath(f))
	}
	if _, err := env.InstallCRDs(paths...); err != nil {
		return nil, nil, err
	}
	world, err = clustersim.New(env.Config, clustersim.Options{JoinDelay: 3 * time.Second, Kubelet: "v1.37.2"})
	if err != nil {
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = world.Run(runCtx) }()
	setup, cancelSetup := context.WithTimeout(ctx, 30*time.Second)
	defer cancelSetup()
	if err := world.CreatePool(setup, "workers-a", 2, clustersim.PoolOptions{Kubelet: "v1.37.2"}); err != nil {
		cancel()
		<-done
		return nil, nil, err
	}
	return world, func() { cancel(); <-done }, nil
}

// startActors runs two actor replicas; leader election picks one.
func startActors(root, bin, url, tokenFile, kubeconfig string) ([]*kube.Process, error) {
	var procs []*kube.Process
	for _, pod := range []string{"actor-1", "actor-2"} {
		logFile, err := os.Create(filepath.Join(root, ".demo", pod+".log"))
		if err != nil {
			return procs, err
		}
		p, err := kube.StartProcessTee(bin, []string{
			"CLUSTER_ID=demo.example.net", "KUBEHZ_API_URL=" + url, "KUBEHZ_AGENT_TOKEN_FILE=" + tokenFile,
			"KUBECONFIG=" + kubeconfig, "KUBEHZ_DESIRED_POLL_SECONDS=2", "POD_NAME=" + pod,
			"KUBEHZ_LIVENESS_FILE=" + filepath.Join(root, ".demo", pod+".alive"),
		}, logFile)
		if err != nil {
			return procs, err
		}
		procs = append(procs, p)
	}
	return procs, nil
}

func stopActors(procs []*kube.Process) {
	for _, p := range procs {
		_, _ = p.Stop(15 * time.Second)
	}
}

// desired is what the simulated platform asks for of pool workers-a.
type desired struct {
	rev      int64
	replicas int
	healing  bool   // authorize self-healing, with a 60 s window and no cooldown
	kubelet  string // authorize upgrades to this version; "" for none
}

func (d desired) doc() map[string]any {
	doc := map[string]any{
		"revision":    d.rev,
		"workerPools": []any{map[string]any{"name": "workers-a", "machineType": "cpx31", "desiredReplicas": d.replicas}},
		"execution":   map[string]any{"scaling": true, "upgrades": d.kubelet != "", "healing": d.healing},
		"healing": map[string]any{"enabled": d.healing, "maxUnhealthy": 1, "unhealthyAfterSeconds": 60,
			"nodeStartupTimeoutSeconds": 600, "cooldownSeconds": 0},
	}
	if d.kubelet != "" {
		doc["kubernetesVersion"] = d.kubelet
	}
	return doc
}

package clustersim

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/kube"
)

// World is a simulated cloud with the real controllers running on it:
// kube-controller-manager, machine-controller and its webhook, and the
// simulator's kubelets.
type World struct {
	*Sim
	Controllers *kube.Controllers
	stop        func()
}

// StartWorld starts the real controllers against env and a simulator on a
// fresh cloud in dir/cloud, the controllers' credentials in dir.
func StartWorld(ctx context.Context, env *kube.Env, dir string, opts Options, ctrl kube.ControllerOptions) (*World, error) {
	opts.CloudDir = filepath.Join(dir, "cloud")
	ctrl.CloudDir = opts.CloudDir
	if err := os.MkdirAll(opts.CloudDir, 0o700); err != nil {
		return nil, err
	}
	sim, err := New(env.Config, opts)
	if err != nil {
		return nil, err
	}
	c, err := env.StartControllers(ctx, dir, ctrl)
	if err != nil {
		return nil, err
	}
	return &World{Sim: sim, Controllers: c, stop: sim.Start(context.WithoutCancel(ctx))}, nil
}

// Stop stops the simulator, then the controllers. What they managed stays;
// Close also clears it.
func (w *World) Stop() error {
	w.stop()
	return w.Controllers.Stop()
}

// Close stops the world and removes what it managed from env, for the next
// test on the same control plane: the machine resources in the simulator's
// namespace, finalizers released, and the pools' Nodes.
func (w *World) Close(ctx context.Context, env *kube.Env) error {
	return errors.Join(w.Stop(),
		env.RemoveMachines(ctx, w.opts.Namespace),
		env.Client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: PoolLabel}))
}

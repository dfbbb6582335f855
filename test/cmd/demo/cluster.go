package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
)

const (
	poolName   = "workers-a" // the pool the story scales, heals and upgrades
	brokenPool = "workers-b" // a pool whose servers cannot be created: a machine issue
	// oldKubelet is where workers-a starts; the story brings it up to the
	// control plane's own version.
	oldKubelet = "v1.37.1"
	newKubelet = kube.KubeVersion
)

// seed writes what the kubelets and controllers of a small cluster would:
// the apiserver alone runs none. A control-plane node, a shop's pods in
// several phases, and a warning event give the view something to show.
func seed(ctx context.Context, client kubernetes.Interface) error {
	if err := controlPlaneNode(ctx, client, controlPlaneName); err != nil {
		return err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	phases := []corev1.PodPhase{"Running", "Running", "Running", "Running", "Running", "Pending", "Succeeded"}
	for i, phase := range phases {
		if err := shopPod(ctx, client, fmt.Sprintf("web-%d", i), phase); err != nil {
			return err
		}
	}
	now := metav1.Now()
	_, err := client.CoreV1().Events("shop").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "web-5."},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-5"},
		Type:           corev1.EventTypeWarning, Reason: "Failed", Message: "Failed to pull image", Count: 3,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "kubelet"},
	}, metav1.CreateOptions{})
	return err
}

// controlPlaneName is the demo cluster's one control-plane node.
const controlPlaneName = "cp-1"

func controlPlaneNode(ctx context.Context, client kubernetes.Interface, name string) error {
	labels := map[string]string{"node-role.kubernetes.io/control-plane": "", clustersim.InstanceTypeLabel: "cx22"}
	n, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	n.Status.NodeInfo.KubeletVersion = kube.KubeVersion
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("3814Mi")}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	_, err = client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

func shopPod(ctx context.Context, client kubernetes.Interface, name string, phase corev1.PodPhase) error {
	pods := client.CoreV1().Pods("shop")
	p, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = phase
	_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// startMachines installs machine-controller's CRDs and starts the real
// controllers (kube-controller-manager, machine-controller and its webhook)
// on a simulated cloud: workers-a with 2 machines, and workers-b whose one
// server the cloud refuses to create. The controllers' output goes to
// controllers.log in logDir. The control-plane node gets a kubelet too, so
// kube-controller-manager sees it alive.
func startMachines(ctx context.Context, env *kube.Env, dir, logDir string, join time.Duration) (world *clustersim.World, stop func(), err error) {
	if _, err := env.InstallCRDs(kube.MachineCRDs); err != nil {
		return nil, nil, err
	}
	logFile, err := os.Create(filepath.Join(logDir, "controllers.log"))
	if err != nil {
		return nil, nil, err
	}
	world, err = clustersim.StartWorld(ctx, env, dir,
		clustersim.Options{JoinDelay: join, Kubelet: oldKubelet, Log: slog.New(slog.DiscardHandler)},
		kube.ControllerOptions{Log: logFile})
	if err != nil {
		return nil, nil, errors.Join(err, logFile.Close())
	}
	stop = func() {
		_ = world.Stop()
		_ = logFile.Close()
	}
	world.KeepAlive(controlPlaneName)
	if err := world.FailCreates(brokenPool, "server type cpx51 is unavailable in location fsn1"); err != nil {
		stop()
		return nil, nil, err
	}
	for _, p := range []struct {
		name     string
		replicas int64
		server   string
	}{{poolName, 2, "cpx31"}, {brokenPool, 1, "cpx51"}} {
		if err := world.CreatePool(ctx, p.name, p.replicas, clustersim.PoolOptions{Kubelet: oldKubelet, ServerType: p.server}); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return world, stop, nil
}

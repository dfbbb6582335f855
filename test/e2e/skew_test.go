package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/platformsim"
)

// TestUpgrade_WaitsForTheOldestControlPlaneSource is a highly available
// control plane halfway through its upgrade: /version answers from the
// upgraded apiserver, at the target's minor, while other members are still
// older. First two control-plane Nodes run an older kubelet; then every Node
// is upgraded but one kube-apiserver static pod still runs an older image.
// Each time the actor refuses with "control plane not yet at target",
// naming the oldest version it read, and patches nothing. The control comes
// last: once every source agrees, the same pool rolls.
func TestUpgrade_WaitsForTheOldestControlPlaneSource(t *testing.T) {
	start := time.Now()
	info, err := suite.env.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	cpMinor, err := strconv.Atoi(strings.TrimRight(info.Minor, "+"))
	if err != nil {
		t.Fatal(err)
	}
	current := fmt.Sprintf("v1.%d.0", cpMinor) // the target: at /version's minor
	nodeOld := fmt.Sprintf("v1.%d.1", cpMinor-1)
	podOld := fmt.Sprintf("v1.%d.2", cpMinor-1)

	world, _ := machineWorld(t)
	if err := world.CreatePool(ctxT(t), "pool-skew", 1, clustersim.PoolOptions{Kubelet: fmt.Sprintf("v1.%d.0", cpMinor-1)}); err != nil {
		t.Fatal(err)
	}
	cp := map[string]string{"node-role.kubernetes.io/control-plane": ""}
	master := map[string]string{"node-role.kubernetes.io/master": ""}
	createNode(t, nodeSpec{name: "cp-skew-1", labels: cp, ready: corev1.ConditionTrue, kubelet: current})
	createNode(t, nodeSpec{name: "cp-skew-2", labels: cp, ready: corev1.ConditionTrue, kubelet: nodeOld})
	createNode(t, nodeSpec{name: "cp-skew-3", labels: master, ready: corev1.ConditionTrue, kubelet: nodeOld})
	// Their kubelets live, so kube-controller-manager keeps them Ready.
	for _, n := range []string{"cp-skew-1", "cp-skew-2", "cp-skew-3"} {
		world.KeepAlive(n)
	}
	for _, n := range []string{"cp-skew-1", "cp-skew-2", "cp-skew-3"} {
		createAPIServerPod(t, "kube-apiserver-"+n, "registry.k8s.io/kube-apiserver:"+current)
	}

	sim := startSim(t, platformsim.Options{})
	if err := sim.SetDesired(desiredDoc{Revision: 21, KubernetesVersion: current, Execution: map[string]any{"upgrades": true},
		WorkerPools: []desiredPool{{Name: "pool-skew", DesiredReplicas: 1}}}, `"21-1"`); err != nil {
		t.Fatal(err)
	}
	startObserver(t, sim)
	startActor(t, sim, "actor-skew")

	// refused waits for the pool's refusal naming observed, and fails at
	// once if the actor rolls instead.
	refused := func(source, observed string) {
		t.Helper()
		want := "control plane not yet at target: observed " + observed
		waitFor(t, "the refusal naming "+source, beatWait, func() bool {
			if got := mdPatches(t, start); len(got) != 0 {
				t.Fatalf("the actor rolled %v while %s ran %s and /version said %s", got, source, observed, info.GitVersion)
			}
			a, ok := latestAction(sim, "upgrade", "pool-skew")
			return ok && a.Status == "failed" && strings.Contains(a.Detail, want)
		})
	}
	refused("control-plane Nodes cp-skew-2 and cp-skew-3", nodeOld)

	for _, n := range []string{"cp-skew-2", "cp-skew-3"} {
		setKubeletVersion(t, n, current)
	}
	setAPIServerImage(t, "kube-apiserver-cp-skew-3", "registry.k8s.io/kube-apiserver:"+podOld+"@sha256:"+strings.Repeat("ab", 32))
	refused("the kube-apiserver pod on cp-skew-3", podOld)

	// The control: every source at the target's minor, and the same pool on
	// the same actor rolls, so the refusals above were the sources' doing.
	setAPIServerImage(t, "kube-apiserver-cp-skew-3", "registry.k8s.io/kube-apiserver:"+current)
	waitFor(t, "pool-skew rolls once every source agrees", time.Minute, func() bool {
		got := mdPatches(t, start)
		return len(got) > 0 && got[0] == "pool-skew"
	})
}

// createAPIServerPod creates a pod shaped like a kubeadm kube-apiserver
// static pod's mirror in kube-system.
func createAPIServerPod(t *testing.T, name, image string) {
	t.Helper()
	c := suite.env.Client.CoreV1().Pods(metav1.NamespaceSystem)
	_, err := c.Create(ctxT(t), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"component": "kube-apiserver", "tier": "control-plane"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "kube-apiserver", Image: image}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

func setAPIServerImage(t *testing.T, name, image string) {
	t.Helper()
	c := suite.env.Client.CoreV1().Pods(metav1.NamespaceSystem)
	p, err := c.Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Containers[0].Image = image
	if _, err := c.Update(ctxT(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setKubeletVersion writes the kubelet version a Node's kubelet would
// report after its upgrade, through the status subresource.
func setKubeletVersion(t *testing.T, name, version string) {
	t.Helper()
	c := suite.env.Client.CoreV1().Nodes()
	// kube-controller-manager and the Node's simulated kubelet write it too.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.NodeInfo.KubeletVersion = version
		_, err = c.UpdateStatus(ctxT(t), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

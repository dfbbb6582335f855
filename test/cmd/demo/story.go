package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// cluster plays the kubelets and controllers of a small cluster: the
// apiserver alone runs none, so the demo writes the status they would.
type cluster struct {
	client kubernetes.Interface
}

func (c *cluster) seed(ctx context.Context) error {
	if err := c.node(ctx, "cp-1", map[string]string{"node-role.kubernetes.io/control-plane": ""}, "cx22"); err != nil {
		return err
	}
	for i := 1; i <= 3; i++ {
		if err := c.node(ctx, fmt.Sprintf("worker-%d", i), nil, "cpx31"); err != nil {
			return err
		}
	}
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	phases := []corev1.PodPhase{"Running", "Running", "Running", "Running", "Running", "Running", "Pending", "Succeeded"}
	for i, phase := range phases {
		if err := c.pod(ctx, fmt.Sprintf("web-%d", i), phase); err != nil {
			return err
		}
	}
	return c.warning(ctx, "shop", "web-7", "BackOff", "Back-off restarting failed container")
}

func (c *cluster) node(ctx context.Context, name string, labels map[string]string, instanceType string) error {
	if labels == nil {
		labels = map[string]string{}
	}
	labels["node.kubernetes.io/instance-type"] = instanceType
	n, err := c.client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	n.Status.NodeInfo.KubeletVersion = "v1.37.2"
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("7820Mi")}
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(corev1.ConditionTrue)}
	_, err = c.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

func (c *cluster) setReady(ctx context.Context, name string, status corev1.ConditionStatus) error {
	n, err := c.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.Conditions = []corev1.NodeCondition{readyCondition(status)}
	_, err = c.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

func readyCondition(status corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}
}

func (c *cluster) pod(ctx context.Context, name string, phase corev1.PodPhase) error {
	pods := c.client.CoreV1().Pods("shop")
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

func (c *cluster) warning(ctx context.Context, ns, object, reason, message string) error {
	now := metav1.Now()
	_, err := c.client.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: object + "."},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: object},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: now, LastTimestamp: now, Source: corev1.EventSource{Component: "kubelet"},
	}, metav1.CreateOptions{})
	return err
}

// story changes the cluster every so often, so the beats have something to
// show, and reports the observer's memory; it returns on Ctrl-C.
func (c *cluster) story(ctx context.Context, obs *kube.Process, sim *platformsim.Server, world *clustersim.Sim) {
	steps := []struct {
		say string
		do  func(context.Context) error
	}{
		{"worker-2 stops reporting: NotReady", func(ctx context.Context) error { return c.setReady(ctx, "worker-2", corev1.ConditionFalse) }},
		{"a new worker joins: worker-4", func(ctx context.Context) error { return c.node(ctx, "worker-4", nil, "cpx31") }},
		{"a pod fails to pull its image", func(ctx context.Context) error {
			if err := c.pod(ctx, "batch-1", corev1.PodPending); err != nil {
				return err
			}
			return c.warning(ctx, "shop", "batch-1", "Failed", "Failed to pull image")
		}},
		{"worker-2 recovers: Ready", func(ctx context.Context) error { return c.setReady(ctx, "worker-2", corev1.ConditionTrue) }},
		{"the platform asks for 3 machines in workers-a (desired revision 2); the leading actor scales it", func(context.Context) error {
			return sim.SetDesired(desired{rev: 2, replicas: 3}.doc(), `"2-100"`)
		}},
		{"a workers-a machine's node has been NotReady for 5 minutes; the platform authorizes healing (revision 3): " +
			"the actor deletes that Machine and its MachineSet recreates it", func(ctx context.Context) error {
			if err := c.killWorker(ctx, world); err != nil {
				return err
			}
			return sim.SetDesired(desired{rev: 3, replicas: 3, healing: true}.doc(), `"3-100"`)
		}},
		{"the platform asks for kubelet v1.37.3 on workers-a (revision 4): the actor rolls the pool node by node", func(context.Context) error {
			return sim.SetDesired(desired{rev: 4, replicas: 3, healing: true, kubelet: "v1.37.3"}.doc(), `"4-100"`)
		}},
	}
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if obs.Exited() {
			say("The observer exited unexpectedly; its log is in .demo/observer.log")
			return
		}
		if rss, err := obs.RSS(); err == nil {
			say("observer resident memory: %.1f MiB", float64(rss)/(1<<20))
		}
		if i < len(steps) {
			say("cluster: %s", steps[i].say)
			stepCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			if err := steps[i].do(stepCtx); err != nil {
				say("cluster step failed: %v", err)
			}
			cancel()
		}
	}
}

// killWorker makes the first live workers-a machine's node NotReady since
// five minutes ago: past the 60 s window at once, so the demo need not wait.
func (c *cluster) killWorker(ctx context.Context, world *clustersim.Sim) error {
	ms, err := world.Machines(ctx, "workers-a")
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Node != "" && !m.Deleting {
			say("cluster: node %s (Machine %s) stops reporting", m.Node, m.Name)
			return world.SetNodeCondition(ctx, m.Node, corev1.ConditionFalse, time.Now().Add(-5*time.Minute))
		}
	}
	return fmt.Errorf("no joined workers-a machine to stop")
}

// printBeat shows what the platform received, one line per beat.
func printBeat(r platformsim.Request) {
	if r.Endpoint != platformsim.EndpointHeartbeat {
		return
	}
	if r.Status/100 != 2 {
		say("platform: heartbeat refused with %d", r.Status)
		return
	}
	var p struct {
		Kubernetes struct{ Version string }
		Nodes      []struct {
			Name, Status, Roles string
		}
		Workloads struct{ Pods map[string]int }
		Events    []struct{ Reason, Kind string }
		Actions   []struct {
			Type, Target, Status, Detail string
			Revision                     int64
		}
	}
	if json.Unmarshal(r.Body, &p) != nil {
		return
	}
	nodes := ""
	for _, n := range p.Nodes {
		nodes += fmt.Sprintf(" %s=%s", n.Name, n.Status)
	}
	pods := p.Workloads.Pods
	actions := ""
	for _, a := range p.Actions {
		actions += fmt.Sprintf(" {%s %s %s rev %d}", a.Type, a.Target, a.Status, a.Revision)
		if a.Type != "scale" {
			actions += fmt.Sprintf(" %q", a.Detail) // the heal cause, the roll's n/m
		}
	}
	say("platform: beat #%d  k8s %s  nodes[%s ]  pods %d (running %d, pending %d, succeeded %d, failed %d)  warnings %d  actions[%s ]  %d B",
		r.Seq, p.Kubernetes.Version, nodes, pods["total"], pods["running"], pods["pending"], pods["succeeded"], pods["failed"],
		len(p.Events), actions, len(r.Body))
}

package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/test/clustersim"
)

// held is what the cluster holds. Objects are named by index, so growing
// from a smaller size adds only the difference.
type held struct {
	nodes, pods, machines int
	crds                  bool
}

const (
	namespaces = 50 // pods spread over bench-00 … bench-49
	// podsPerEvent: one Warning event for every 25 pods.
	podsPerEvent = 25
	// poolSize is deploy/actor's KUBEHZ_MAX_REPLICAS: a cluster grows by
	// adding pools, not by pools beyond what the actor may scale.
	poolSize = 50
	// kubelet is what every Node reports and every Machine asks for.
	kubelet = "v1.37.2"
)

// populated is what one grow wrote and how fast.
type populated struct {
	Objects  int64   `json:"objects"`
	Requests int64   `json:"requests"` // creates, status writes and the reads they needed
	Seconds  float64 `json:"seconds"`
	Workers  int     `json:"workers"`
}

func (p populated) rate() float64 {
	if p.Seconds <= 0 {
		return 0
	}
	return float64(p.Objects) / p.Seconds
}

// tally counts a grow's writes from every worker.
type tally struct{ objects, requests atomic.Int64 }

// created counts one object and the requests it took.
func (t *tally) created(requests int64) {
	t.objects.Add(1)
	t.requests.Add(requests)
}

// step creates objects from to to, by index.
type step struct {
	what     string
	from, to int
	// prepare runs once before the first object, if there is one.
	prepare func(context.Context) error
	do      func(context.Context, int) error
}

// grow creates whatever of v the cluster lacks: nodes, namespaces, pods,
// events and, with the CRDs, the pools' MachineDeployments, MachineSets and
// one Machine per Node.
func grow(ctx context.Context, v variant) (populated, error) {
	c, have := harness.admin, harness.held
	var t tally
	start := time.Now()
	steps := []step{
		{what: "nodes", from: have.nodes, to: v.Nodes, do: func(ctx context.Context, i int) error { return createNode(ctx, c, &t, i) }},
		{what: "namespaces", to: namespaces, do: func(ctx context.Context, i int) error { return createNamespace(ctx, c, &t, i) }},
		{what: "pods", from: have.pods, to: v.Pods, do: func(ctx context.Context, i int) error { return createPod(ctx, c, &t, i, v.Nodes) }},
		{what: "events", from: have.pods / podsPerEvent, to: v.Pods / podsPerEvent, do: func(ctx context.Context, i int) error { return createEvent(ctx, c, &t, i) }},
	}
	if v.CRDs {
		var links machineLinks
		steps = append(steps,
			// Every pool again: the last one may have grown.
			step{what: "pools", to: pools(v.Nodes), do: func(ctx context.Context, p int) error { return applyPool(ctx, &t, p, v.Nodes) }},
			step{what: "machines", from: have.machines, to: v.Nodes,
				prepare: func(ctx context.Context) (err error) { links, err = linksFor(ctx); return err },
				do:      func(ctx context.Context, i int) error { return createMachine(ctx, &t, links, i) }},
		)
	}
	for _, s := range steps {
		if s.from >= s.to {
			continue
		}
		began, before := time.Now(), t.objects.Load()
		if s.prepare != nil {
			if err := s.prepare(ctx); err != nil {
				return populated{}, fmt.Errorf("prepare %s: %w", s.what, err)
			}
		}
		if err := parallel(ctx, s.from, s.to, s.do); err != nil {
			return populated{}, fmt.Errorf("create %s: %w", s.what, err)
		}
		if n := t.objects.Load() - before; n > 0 {
			took := time.Since(began)
			logf("  %-10s %7d in %6.1fs  %6.0f/s", s.what, n, took.Seconds(), float64(n)/took.Seconds())
		}
	}
	harness.held = held{nodes: v.Nodes, pods: v.Pods, crds: v.CRDs, machines: have.machines}
	if v.CRDs {
		harness.held.machines = v.Nodes
	}
	return populated{Objects: t.objects.Load(), Requests: t.requests.Load(), Seconds: time.Since(start).Seconds(), Workers: workers()}, nil
}

// parallel calls do for every index in [from, to) on workers() goroutines
// and returns the first error.
func parallel(ctx context.Context, from, to int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers() {
		wg.Go(func() {
			for i := range next {
				if err := retried(ctx, func() error { return do(ctx, i) }); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := from; i < to; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// attempts and firstRetry bound retried: at most 5 tries, 15 s of waiting.
var (
	attempts   = 5
	firstRetry = time.Second
)

// retried calls write again, after 1, 2, 4 and 8 s, while the apiserver
// answers that it is too busy (a server-side timeout, 429). On 2 cores a
// 150,000-pod populate drives it there now and then, and one slow create
// used to end a run that had been populating for half an hour. A create
// that timed out may have landed: the writers treat AlreadyExists as done.
func retried(ctx context.Context, write func() error) error {
	wait := firstRetry
	for try := 1; ; try++ {
		err := write()
		if try == attempts || !tooBusy(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func tooBusy(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err)
}

// exists reports an object a previous, interrupted grow already wrote.
func exists(err error) bool { return apierrors.IsAlreadyExists(err) }

func namespace(i int) string { return fmt.Sprintf("bench-%02d", i%namespaces) }

func createNamespace(ctx context.Context, c kubernetes.Interface, t *tally, i int) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace(i),
		Labels: map[string]string{"team": fmt.Sprintf("team-%02d", i%12), "pod-security.kubernetes.io/enforce": "baseline"}}}
	_, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if exists(err) {
		return nil
	}
	if err == nil {
		t.created(1)
	}
	return err
}

// Node i belongs to pool i/poolSize. Its name is its Machine's, as
// machine-controller names a worker's Node after the Machine.
func pools(nodes int) int         { return (nodes + poolSize - 1) / poolSize }
func poolName(p int) string       { return fmt.Sprintf("workers-%02d", p) }
func machineSetName(p int) string { return poolName(p) + "-7f9c4d8b6" }
func nodeName(i int) string       { return fmt.Sprintf("%s-%05d", machineSetName(i/poolSize), i) }

// poolReplicas is how many of nodes pool p holds.
func poolReplicas(p, nodes int) int { return min(poolSize, nodes-p*poolSize) }

// nodeLabels are the labels a worker's kubelet and machine-controller set.
func nodeLabels(i int) map[string]string {
	name, pool := nodeName(i), poolName(i/poolSize)
	return map[string]string{
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "cpx31", "beta.kubernetes.io/instance-type": "cpx31",
		"topology.kubernetes.io/region": "eu-central", "topology.kubernetes.io/zone": "fsn1-dc14",
		"node-role.kubernetes.io/worker": "", "workerset": pool, clustersim.PoolLabel: pool,
		"machine-controller/owned-by": string(machineUID(i)),
	}
}

// machineUID is a stable stand-in for the Machine's UID, which
// machine-controller labels the Node with; Nodes may exist before Machines.
func machineUID(i int) types.UID {
	return types.UID(fmt.Sprintf("6f1e2d3c-0000-4000-8000-%012d", i))
}

// createNode creates a worker and writes the status its kubelet would.
func createNode(ctx context.Context, c kubernetes.Interface, t *tally, i int) error {
	name := nodeName(i)
	n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels(i), Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true",
			"cluster.k8s.io/machine": "kube-system/" + name,
		}},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i%250), PodCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", i%250)},
			ProviderID: fmt.Sprintf("hcloud://%d", 40_000_000+i)},
	}, metav1.CreateOptions{})
	if exists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8148916Ki"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("157197504Ki"),
	}
	// Ready since an hour ago, heartbeat now: nothing for healing to do.
	now, since := metav1.Now(), metav1.NewTime(time.Now().Add(-time.Hour))
	n.Status = corev1.NodeStatus{
		Capacity: resources, Allocatable: resources,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: since},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: since},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", LastHeartbeatTime: now, LastTransitionTime: since},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: since},
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250)},
			{Type: corev1.NodeHostName, Address: name}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet, KernelVersion: "6.8.0-60-generic",
			OSImage: "Ubuntu 24.04.2 LTS", ContainerRuntimeVersion: "containerd://2.1.3", OperatingSystem: "linux", Architecture: "amd64",
			MachineID: fmt.Sprintf("%032x", i), SystemUUID: string(machineUID(i)), BootID: fmt.Sprintf("%032x", i+1)},
	}
	for j := range 10 {
		repo := fmt.Sprintf("registry.example.net/team-%02d/svc-%03d", j, j)
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{SizeBytes: int64(20_000_000 + j),
			Names: []string{fmt.Sprintf("%s@sha256:%064x", repo, j), repo + ":v1.0.0"}})
	}
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return err
	}
	t.created(2)
	return nil
}

// createPod creates a Deployment's pod bound to a node and, unless it is one
// of the Pending ones, writes its phase and status as a kubelet would.
func createPod(ctx context.Context, c kubernetes.Interface, t *tally, i, nodes int) error {
	pod := podSpec(i, nodes)
	p, err := c.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	phase := podPhase(i)
	if exists(err) {
		// Written by an earlier try whose answer was lost, perhaps before
		// its status: write that now unless it is already there.
		if p, err = c.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || p.Status.Phase == phase {
			return err
		}
	} else if err != nil {
		return err
	}
	if phase == corev1.PodPending {
		t.created(1) // the apiserver creates every pod Pending
		return nil
	}
	p.Status = podStatus(p, i, nodes, phase)
	if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	t.created(2)
	return nil
}

// podSpec is what a Deployment's ReplicaSet and the admission chain make: an
// app and a mesh proxy, both probed, with config, a secret, scratch space
// and the projected ServiceAccount token.
func podSpec(i, nodes int) *corev1.Pod {
	ns, app := namespace(i), fmt.Sprintf("svc-%03d", i%300)
	rs := app + "-6b8d9c7f5"
	probe := func(path string, port, delay int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromInt32(port), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: delay, PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	}
	token := fmt.Sprintf("kube-api-access-%05x", i%0xfffff)
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/" + app, ReadOnly: true},
		{Name: "tls", MountPath: "/etc/tls", ReadOnly: true},
		{Name: "tmp", MountPath: "/tmp"},
		{Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
	}
	env := []corev1.EnvVar{
		{Name: "LOG_LEVEL", Value: "info"}, {Name: "HTTP_ADDR", Value: ":8080"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
		{Name: "DATABASE_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: app + "-db"}, Key: "password"}}},
		{Name: "FEATURE_FLAGS", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}, Key: "features"}}},
	}
	container := func(name, image string, port int32, cpu, memory string) corev1.Container {
		return corev1.Container{Name: name, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
			Args:  []string{"--config=/etc/" + app + "/config.yaml", fmt.Sprintf("--port=%d", port)},
			Ports: []corev1.ContainerPort{{Name: "http-" + name, ContainerPort: port, Protocol: corev1.ProtocolTCP}},
			Env:   env, VolumeMounts: mounts,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
			},
			LivenessProbe: probe("/healthz", port, 10), ReadinessProbe: probe("/ready", port, 2),
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: new(false), ReadOnlyRootFilesystem: new(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		}
	}
	grace, tolerate := int64(30), int64(300)
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%05x", rs, i), Namespace: ns, GenerateName: rs + "-",
			Labels: map[string]string{"app": app, "pod-template-hash": "6b8d9c7f5", "app.kubernetes.io/name": app,
				"app.kubernetes.io/part-of": ns, "app.kubernetes.io/version": fmt.Sprintf("v1.%d.0", i%7)},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080",
				"kubectl.kubernetes.io/restartedAt": "2026-07-01T09:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(fmt.Sprintf("0b5e7c1a-0000-4000-8000-%012d", i%300)), Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			NodeName: nodeName(i % nodes), ServiceAccountName: app, RestartPolicy: corev1.RestartPolicyAlways,
			DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler", TerminationGracePeriodSeconds: &grace,
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: new(true), RunAsUser: new(int64(10001)), FSGroup: new(int64(10001))},
			Containers: []corev1.Container{
				container("app", fmt.Sprintf("registry.example.net/%s/%s:v1.%d.0", ns, app, i%7), 8080, "100m", "256Mi"),
				container("proxy", "registry.example.net/mesh/proxy:1.24.3", 15001, "50m", "64Mi"),
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: app + "-tls"}}},
				{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("64Mi"))}}},
				{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}}}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
			},
		},
	}
}

// podStatus is what the kubelet reports for a pod in phase.
func podStatus(p *corev1.Pod, i, nodes int, phase corev1.PodPhase) corev1.PodStatus {
	now := metav1.Now()
	ready, state := corev1.ConditionTrue, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	if phase != corev1.PodRunning {
		term := &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: now, FinishedAt: now}
		if phase == corev1.PodFailed {
			term.ExitCode, term.Reason = 1, "Error"
		}
		ready, state = corev1.ConditionFalse, corev1.ContainerState{Terminated: term}
	}
	podIP := fmt.Sprintf("10.244.%d.%d", i%nodes%250, i/nodes%250+2)
	s := corev1.PodStatus{
		Phase: phase, StartTime: &now, QOSClass: corev1.PodQOSBurstable,
		HostIP: fmt.Sprintf("10.0.%d.%d", i%nodes/250, i%nodes%250), HostIPs: []corev1.HostIP{{IP: fmt.Sprintf("10.0.%d.%d", i%nodes/250, i%nodes%250)}},
		PodIP: podIP, PodIPs: []corev1.PodIP{{IP: podIP}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	for _, ct := range p.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name: ct.Name, Image: ct.Image, ImageID: ct.Image + "@sha256:" + fmt.Sprintf("%064x", i),
			ContainerID: fmt.Sprintf("containerd://%064x", i), Ready: phase == corev1.PodRunning,
			Started: new(phase == corev1.PodRunning), RestartCount: int32(i % 3), State: state,
		})
	}
	return s
}

// podPhase gives, of every 100 pods, 90 Running, 5 Pending, 3 Succeeded and
// 2 Failed.
func podPhase(i int) corev1.PodPhase {
	switch i % 100 {
	case 90, 91, 92, 93, 94:
		return corev1.PodPending
	case 95, 96, 97:
		return corev1.PodSucceeded
	case 98, 99:
		return corev1.PodFailed
	}
	return corev1.PodRunning
}

// createEvent records the Warning a kubelet gives a crash-looping pod: event
// i is about pod i*podsPerEvent.
func createEvent(ctx context.Context, c kubernetes.Interface, t *tally, i int) error {
	p := i * podsPerEvent
	ns, pod := namespace(p), fmt.Sprintf("svc-%03d-6b8d9c7f5-%05x", p%300, p)
	last := metav1.NewTime(time.Now().Add(-time.Duration(i%3600) * time.Second))
	_, err := c.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", pod, i)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, APIVersion: "v1", FieldPath: "spec.containers{app}"},
		Type:           corev1.EventTypeWarning, Reason: "BackOff", Count: int32(1 + i%20),
		Message:        "Back-off restarting failed container app in pod " + pod + "_" + ns,
		FirstTimestamp: last, LastTimestamp: last, Source: corev1.EventSource{Component: "kubelet", Host: nodeName(0)},
		ReportingController: "kubelet", ReportingInstance: nodeName(0),
	}, metav1.CreateOptions{})
	if exists(err) {
		return nil
	}
	if err == nil {
		t.created(1)
	}
	return err
}

// Package bench measures the built observer against a real kube-apiserver:
// its resident memory and its time to first beat at growing cluster sizes,
// under its own ServiceAccount with exactly the RBAC in deploy/observer. It
// holds benchmarks only; `go test` without -bench starts nothing.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// harness is the control plane every benchmark shares, started by the first
// benchmark that needs it and stopped by TestMain.
var harness struct {
	once  sync.Once
	err   error
	dir   string
	env   *kube.Env
	admin kubernetes.Interface // system:masters, unthrottled: builds the cluster fast
	bin   string               // the observer, built without -race: RSS is the point
	// kubeconfig authenticates as kubehz-observer.
	kubeconfig string
	// baseline ignores the harness' own client goroutines; anything a
	// benchmark starts beyond them must be gone by the end.
	baseline goleak.Option
	// nodes and pods the cluster holds so far; it only grows.
	nodes, pods int
}

func TestMain(m *testing.M) {
	code := m.Run()
	if harness.baseline != nil && code == 0 {
		if err := goleak.Find(harness.baseline); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	if harness.env != nil {
		if err := harness.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
		}
	}
	if harness.dir != "" {
		_ = os.RemoveAll(harness.dir)
	}
	os.Exit(code)
}

// startHarness records each part as it comes up, so TestMain can stop what
// a failed start left behind.
func startHarness() error {
	dir, err := os.MkdirTemp("", "kubehz-bench-")
	if err != nil {
		return err
	}
	harness.dir = dir
	env, err := kube.Start(kube.Options{})
	if err != nil {
		return err
	}
	harness.env = env
	harness.bin = filepath.Join(dir, "observer")
	if err := kube.Build(env.Root, "./observer", harness.bin, false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.ApplyKustomization(ctx, filepath.Join(env.Root, "deploy", "observer")); err != nil {
		return err
	}
	harness.kubeconfig = filepath.Join(dir, "observer.kubeconfig")
	if err := env.ServiceAccountKubeconfig(ctx, "kubehz-system", "kubehz-observer", harness.kubeconfig); err != nil {
		return err
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 5000, 5000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if harness.admin, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	// One request first, so the admin client's connection exists before the
	// baseline is taken.
	if _, err := harness.admin.Discovery().ServerVersion(); err != nil {
		return err
	}
	harness.baseline = goleak.IgnoreCurrent()
	return nil
}

// BenchmarkObserverRSS runs the observer against clusters of growing size
// and reports, once it has beaten with every pod counted and settled for
// five seconds: rss-MiB, the largest resident set sampled (one sample per
// iteration, half a second apart, after three taken on setup); peak-rss-MiB,
// the kernel's high-water mark since start (initial sync included);
// anon-MiB, at the end, the resident set not backed by the binary's file;
// first-beat-ms, from process start to the first accepted beat; beat-B, the
// size of that beat in bytes. ns/op is suppressed: the loop only paces the
// samples.
func BenchmarkObserverRSS(b *testing.B) {
	for _, size := range []clusterSize{{nodes: 3, pods: 50}, {nodes: 100, pods: 5000}} {
		var run *observerRun
		b.Run(fmt.Sprintf("nodes=%d/pods=%d", size.nodes, size.pods), func(b *testing.B) {
			harness.once.Do(func() { harness.err = startHarness() })
			if harness.err != nil {
				b.Fatal(harness.err)
			}
			if harness.pods > size.pods || harness.nodes > size.nodes {
				b.Skipf("the cluster already holds %d nodes and %d pods; run with -count=1", harness.nodes, harness.pods)
			}
			var err error
			run, err = startRun(size)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				time.Sleep(500 * time.Millisecond)
				if err := run.sample(); err != nil {
					b.Fatal(err)
				}
			}
			run.report(b)
		})
		if run != nil {
			run.stop(b)
		}
	}
}

// observerRun is one observer beating for one cluster size.
type observerRun struct {
	proc      *kube.Process
	sim       *platformsim.Server
	firstBeat time.Duration
	beatBytes int
	samples   []int64 // resident set, bytes
}

// startRun grows the cluster to size, starts a simulator and the observer,
// waits for a beat that counts every pod and lets the observer settle.
func startRun(size clusterSize) (*observerRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := grow(ctx, harness.admin, size); err != nil {
		return nil, err
	}
	harness.nodes, harness.pods = size.nodes, size.pods

	run := &observerRun{sim: platformsim.New(platformsim.Options{})}
	if _, err := run.sim.Start(); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(harness.dir, "agent-token")
	if err := os.WriteFile(tokenFile, []byte(platformsim.DefaultToken+"\n"), 0o600); err != nil {
		run.sim.Close()
		return nil, err
	}
	start := time.Now()
	proc, err := kube.StartProcess(harness.bin, []string{
		"CLUSTER_ID=" + platformsim.DefaultClusterID,
		"KUBEHZ_API_URL=" + run.sim.URL(),
		"KUBEHZ_AGENT_TOKEN_FILE=" + tokenFile,
		"KUBECONFIG=" + harness.kubeconfig,
		"KUBEHZ_FULL_INTERVAL=2s", "KUBEHZ_DEBOUNCE=200ms", "KUBEHZ_MIN_GAP=500ms",
		"KUBEHZ_LOG_LEVEL=info",
		// As deploy/observer's 128Mi limit passes it through the downward API.
		"KUBEHZ_MEMORY_LIMIT=134217728",
	})
	if err != nil {
		run.sim.Close()
		return nil, err
	}
	run.proc = proc
	if err := run.awaitFullBeat(ctx, start, size.pods); err != nil {
		return run, err
	}
	time.Sleep(5 * time.Second) // settle: the first beats' garbage, the watch caches
	for range 3 {
		if err := run.sample(); err != nil {
			return run, err
		}
		time.Sleep(500 * time.Millisecond)
	}
	return run, nil
}

func (r *observerRun) awaitFullBeat(ctx context.Context, start time.Time, pods int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	first, err := r.sim.WaitBeat(ctx, nil)
	if err != nil {
		return fmt.Errorf("no beat: %w\nobserver output:\n%s", err, tail(r.proc.Output()))
	}
	r.firstBeat, r.beatBytes = first.Time.Sub(start), len(first.Body)
	full, err := r.sim.WaitBeat(ctx, func(b platformsim.Beat) bool {
		v, _ := b.Lookup("workloads.pods.total")
		n, ok := platformsim.Number(v)
		return ok && n == int64(pods)
	})
	if err != nil {
		return fmt.Errorf("no beat counted %d pods: %w\nobserver output:\n%s", pods, err, tail(r.proc.Output()))
	}
	if full.Seq != first.Seq {
		// Caches sync before the first beat, so this would be a bug.
		return fmt.Errorf("the first beat did not count every pod; beat %d did", full.Seq)
	}
	return nil
}

func (r *observerRun) sample() error {
	rss, err := r.proc.RSS()
	if err != nil {
		return fmt.Errorf("observer RSS (exited: %t): %w", r.proc.Exited(), err)
	}
	r.samples = append(r.samples, rss)
	return nil
}

func (r *observerRun) report(b *testing.B) {
	const mib = 1 << 20
	b.ReportMetric(float64(slices.Max(r.samples))/mib, "rss-MiB")
	for field, unit := range map[string]string{"VmHWM": "peak-rss-MiB", "RssAnon": "anon-MiB"} {
		v, err := procStatus(r.proc.Pid(), field)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(v)/mib, unit)
	}
	b.ReportMetric(float64(r.firstBeat.Milliseconds()), "first-beat-ms")
	b.ReportMetric(float64(r.beatBytes), "beat-B")
	b.ReportMetric(0, "ns/op")
}

// stop ends the observer, which must exit cleanly on SIGTERM, and the
// simulator.
func (r *observerRun) stop(b *testing.B) {
	if r.proc != nil {
		if code, err := r.proc.Stop(15 * time.Second); err != nil || code != 0 {
			b.Errorf("observer did not stop cleanly (code %d, %v)\n%s", code, err, tail(r.proc.Output()))
		}
	}
	r.sim.Close()
}

// procStatus reads one memory field of /proc/<pid>/status, in bytes:
// VmHWM is the resident-set high-water mark, RssAnon the resident memory not
// backed by a file (the Go heap and stacks, not the binary's text).
func procStatus(pid int, field string) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err != nil {
				return 0, fmt.Errorf("parse %s %q: %w", field, rest, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func tail(s string) string {
	const n = 4000
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// clusterSize is how many nodes and pods the cluster holds; there is one
// Warning event for every 25 pods.
type clusterSize struct{ nodes, pods int }

const (
	workers    = 8  // concurrent creators
	namespaces = 20 // pods spread over bench-00 … bench-19
)

// grow creates whatever of size the cluster lacks. Objects are named by
// index, so growing from a smaller size adds only the difference.
func grow(ctx context.Context, c kubernetes.Interface, size clusterSize) error {
	if err := parallel(ctx, harness.nodes, size.nodes, func(ctx context.Context, i int) error {
		return createNode(ctx, c, i)
	}); err != nil {
		return err
	}
	if err := parallel(ctx, 0, namespaces, func(ctx context.Context, i int) error {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace(i)}}
		return ignoreExists(c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}))
	}); err != nil {
		return err
	}
	if err := parallel(ctx, harness.pods, size.pods, func(ctx context.Context, i int) error {
		return createPod(ctx, c, i, size.nodes)
	}); err != nil {
		return err
	}
	return parallel(ctx, harness.pods/25, size.pods/25, func(ctx context.Context, i int) error {
		return createEvent(ctx, c, i)
	})
}

// parallel calls do for every index in [from, to) on a few workers and
// returns the first error.
func parallel(ctx context.Context, from, to int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(ctx, i); err != nil {
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

func ignoreExists[T any](_ T, err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func namespace(i int) string { return fmt.Sprintf("bench-%02d", i%namespaces) }
func nodeName(i int) string  { return fmt.Sprintf("workers-a-7f9c-%05d", i) }

// createNode creates a worker and writes the status a kubelet would.
func createNode(ctx context.Context, c kubernetes.Interface, i int) error {
	name := nodeName(i)
	n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": name,
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "cpx31", "beta.kubernetes.io/instance-type": "cpx31",
		"topology.kubernetes.io/region": "eu-central", "topology.kubernetes.io/zone": "fsn1-dc14",
		"node-role.kubernetes.io/worker": "", "workerset": "workers-a", "kubehz.dev/pool": "workers-a",
	}}}, metav1.CreateOptions{})
	if err != nil {
		return ignoreExists(n, err)
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8148916Ki"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("157197504Ki"),
	}
	now := metav1.Now()
	n.Status = corev1.NodeStatus{
		Capacity: resources, Allocatable: resources,
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: now, LastTransitionTime: now},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now},
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250)},
			{Type: corev1.NodeHostName, Address: name}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", KernelVersion: "6.8.0-60-generic",
			OSImage: "Ubuntu 24.04.2 LTS", ContainerRuntimeVersion: "containerd://2.1.3", OperatingSystem: "linux", Architecture: "amd64"},
	}
	for j := range 10 {
		repo := fmt.Sprintf("registry.example.net/team-%02d/svc-%03d", j, j)
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{SizeBytes: int64(20_000_000 + j),
			Names: []string{fmt.Sprintf("%s@sha256:%064x", repo, j), repo + ":v1.0.0"}})
	}
	_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

// createPod creates a Deployment-like pod bound to a node and, unless it is
// one of the Pending ones, writes its phase and status as a kubelet would.
func createPod(ctx context.Context, c kubernetes.Interface, i, nodes int) error {
	ns, app := namespace(i), fmt.Sprintf("svc-%03d", i%300)
	image := fmt.Sprintf("registry.example.net/%s/%s:v1.%d.0", ns, app, i%7)
	container := func(name, img string, port int32) corev1.Container {
		return corev1.Container{Name: name, Image: img, Args: []string{"--config=/etc/" + app + "/config.yaml"},
			Ports: []corev1.ContainerPort{{Name: name, ContainerPort: port}},
			Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "HTTP_ADDR", Value: ":8080"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			}}
	}
	p, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf("%s-6b8d9c7f5-%05x", app, i),
			Labels:      map[string]string{"app": app, "pod-template-hash": "6b8d9c7f5", "app.kubernetes.io/part-of": ns},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
		},
		Spec: corev1.PodSpec{NodeName: nodeName(i % nodes),
			Containers: []corev1.Container{container("app", image, 8080), container("proxy", "registry.example.net/mesh/proxy:1.24.3", 15001)}},
	}, metav1.CreateOptions{})
	if err != nil {
		return ignoreExists(p, err)
	}
	phase := podPhase(i)
	if phase == corev1.PodPending {
		return nil // the apiserver creates every pod Pending
	}
	now := metav1.Now()
	ready, state := corev1.ConditionTrue, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	if phase != corev1.PodRunning {
		term := &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: now}
		if phase == corev1.PodFailed {
			term.ExitCode, term.Reason = 1, "Error"
		}
		ready, state = corev1.ConditionFalse, corev1.ContainerState{Terminated: term}
	}
	p.Status = corev1.PodStatus{
		Phase: phase, StartTime: &now, HostIP: fmt.Sprintf("10.0.%d.%d", i%nodes/250, i%nodes%250),
		PodIP: fmt.Sprintf("10.244.%d.%d", i/250%250, i%250),
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
		},
	}
	for _, ct := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: ct.Name, Image: ct.Image, ImageID: ct.Image + "@sha256:" + fmt.Sprintf("%064x", i),
			ContainerID: fmt.Sprintf("containerd://%064x", i), Ready: phase == corev1.PodRunning,
			State: state,
		})
	}
	_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
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

// createEvent records the Warning a kubelet gives a crash-looping pod.
func createEvent(ctx context.Context, c kubernetes.Interface, i int) error {
	ns, pod := namespace(i*25), fmt.Sprintf("svc-%03d-6b8d9c7f5-%05x", i*25%300, i*25)
	last := metav1.NewTime(time.Now().Add(-time.Duration(i) * time.Second))
	return ignoreExists(c.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", pod, i)},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, FieldPath: "spec.containers{app}"},
		Type:           corev1.EventTypeWarning, Reason: "BackOff", Count: int32(1 + i%20),
		Message:        "Back-off restarting failed container app in pod " + pod,
		FirstTimestamp: last, LastTimestamp: last, Source: corev1.EventSource{Component: "kubelet", Host: nodeName(0)},
	}, metav1.CreateOptions{}))
}

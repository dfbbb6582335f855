package cluster

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeapi/kubeapitest"
)

// BenchmarkRecordMemory prints what an informer cache retains per object:
// the object as the observer's decoder hands it over (kubeapi's kinds, which
// keep only the fields read) against the compact record the transform
// keeps. Both sides count the interface slot a store holds; the
// store's own map and key strings cost the same either way and are left out.
func BenchmarkRecordMemory(b *testing.B) {
	cases := []struct {
		name      string
		objects   int
		decode    func(i int) any
		transform cache.TransformFunc
	}{
		{"pods", 5000, decodedPodPhase, podTransform},
		{"nodes", 1000, decodedNode, nodeTransform},
		{"events", 2000, decodedEvent, eventTransform(false)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var full, record int64
			runs := 0
			for b.Loop() {
				f, r := retained(b, c.objects, c.decode, c.transform)
				full, record, runs = full+f, record+r, runs+1
			}
			perFull := float64(full) / float64(runs*c.objects)
			perRecord := float64(record) / float64(runs*c.objects)
			b.ReportMetric(perFull, "full-B/obj")
			b.ReportMetric(perRecord, "record-B/obj")
			b.ReportMetric(perFull/perRecord, "full/record")
		})
	}
}

// retained returns the live heap bytes held by n full objects and then, with
// the full objects dropped, by their n records.
func retained(b *testing.B, n int, decode func(int) any, transform cache.TransformFunc) (full, record int64) {
	base := liveHeap(b)
	records := func() []any {
		objs := make([]any, n)
		for i := range objs {
			objs[i] = decode(i)
		}
		full = liveHeap(b) - base
		recs := make([]any, n)
		for i, o := range objs {
			r, err := transform(o)
			if err != nil {
				b.Fatal(err)
			}
			recs[i] = r
		}
		return recs
	}()
	record = liveHeap(b) - base
	runtime.KeepAlive(records)
	return full, record
}

// liveHeap is the heap in use right after a full collection, in bytes. The
// timer stops around it so ns/op is the cost of decoding and transforming.
func liveHeap(b *testing.B) int64 {
	b.StopTimer()
	defer b.StartTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

var benchEpoch = metav1.NewTime(time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC))

// decodedPodPhase is benchPod(i) as the observer's pod client decodes it.
func decodedPodPhase(i int) any { return kubeapitest.MustConvert[*kubeapi.PodPhase](benchPod(i)) }

// decodedNode is benchNode(i) as the observer's node client decodes it.
func decodedNode(i int) any { return kubeapitest.MustConvert[*kubeapi.Node](benchNode(i)) }

// decodedEvent is benchEvent(i) as the observer's event client decodes it.
func decodedEvent(i int) any { return kubeapitest.MustConvert[*kubeapi.Event](benchEvent(i)) }

// A Deployment's pod as the kubelet leaves it: two containers and an init
// container, the projected token volume, five conditions, container statuses
// and the managedFields of the ReplicaSet controller and the kubelet.
func benchPod(i int) *corev1.Pod {
	ns := fmt.Sprintf("team-%02d", i%40)
	app := fmt.Sprintf("svc-%03d", i%300)
	hash := fmt.Sprintf("%08x", uint32(i%300)*2654435761)
	name := fmt.Sprintf("%s-%s-%05x", app, hash, i)
	image := fmt.Sprintf("registry.example.net/%s/%s:v1.%d.%d", ns, app, i%7, i%13)
	uid := types.UID(fmt.Sprintf("5f0c%04x-8d1e-4c2a-9b7e-%012x", i%65536, i))
	labels := map[string]string{
		"app": app, "pod-template-hash": hash, "app.kubernetes.io/name": app,
		"app.kubernetes.io/part-of": ns, "version": "v1",
	}
	env := []corev1.EnvVar{
		{Name: "LOG_LEVEL", Value: "info"},
		{Name: "HTTP_ADDR", Value: ":8080"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	mounts := []corev1.VolumeMount{
		{Name: "config", MountPath: "/etc/" + app, ReadOnly: true},
		{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
	}
	resources := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstrPort}},
		PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3}
	container := func(n, img string) corev1.Container {
		return corev1.Container{Name: n, Image: img, Args: []string{"--config=/etc/" + app + "/config.yaml"},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Env:   env, Resources: resources, VolumeMounts: mounts, LivenessProbe: probe, ReadinessProbe: probe,
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent}
	}
	running := func(n, img string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: n, Image: img, ImageID: img + "@sha256:" + fmt.Sprintf("%064x", i),
			ContainerID: "containerd://" + fmt.Sprintf("%064x", i*3+len(n)), Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: benchEpoch}}}
	}
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: benchEpoch}
	}
	grace, token := int64(30), int64(3607)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: app + "-" + hash + "-", Namespace: ns, UID: uid,
			ResourceVersion: fmt.Sprint(100000 + i), CreationTimestamp: benchEpoch, Labels: labels,
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080",
				"kubectl.kubernetes.io/restartedAt": "2026-07-01T09:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash,
				UID: uid + "-rs", Controller: new(true), BlockOwnerDeletion: new(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &benchEpoch, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(podSpecFields)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &benchEpoch, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(podStatusFields),
					Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{container("migrate", image)},
			Containers:     []corev1.Container{container("app", image), container("proxy", "registry.example.net/mesh/proxy:1.24.3")},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: app + "-config"}}}},
				{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &token}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
							FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
					}}}},
			},
			NodeName: fmt.Sprintf("workers-a-7f9c-%05d", i%500), ServiceAccountName: "default",
			RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler",
			TerminationGracePeriodSeconds: &grace, EnableServiceLinks: new(true),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, StartTime: &benchEpoch,
			Conditions: []corev1.PodCondition{cond("PodReadyToStartContainers"), cond(corev1.PodInitialized),
				cond(corev1.PodReady), cond(corev1.ContainersReady), cond(corev1.PodScheduled)},
			HostIP: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250), PodIP: fmt.Sprintf("10.244.%d.%d", i/250%250, i%250),
			ContainerStatuses: []corev1.ContainerStatus{running("app", image), running("proxy", "registry.example.net/mesh/proxy:1.24.3")},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "migrate", Image: image, Ready: true,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: benchEpoch}}}},
		},
	}
}

var intstrPort = intstr.FromString("http")

// A worker node as kubelet and machine-controller leave it: fifteen labels,
// resources, five conditions, thirty cached images and three managers.
func benchNode(i int) *corev1.Node {
	name := fmt.Sprintf("workers-a-7f9c-%05d", i)
	labels := map[string]string{
		"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"beta.kubernetes.io/instance-type": "cpx31", "kubernetes.io/arch": "amd64",
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
		"node.kubernetes.io/instance-type": "cpx31", "node-role.kubernetes.io/worker": "",
		"topology.kubernetes.io/region": "eu-central", "topology.kubernetes.io/zone": "fsn1-dc14",
		"failure-domain.beta.kubernetes.io/region": "eu-central", "failure-domain.beta.kubernetes.io/zone": "fsn1-dc14",
		"machine-controller/owned-by": fmt.Sprintf("%08x-1c2d-4e5f-8a9b-%012x", i, i),
		"workerset":                   "workers-a", "kubehz.dev/pool": "workers-a",
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8148916Ki"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("157197504Ki"),
		"hugepages-1Gi": resource.MustParse("0"), "hugepages-2Mi": resource.MustParse("0"),
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: benchEpoch, LastTransitionTime: benchEpoch}
	}
	images := make([]corev1.ContainerImage, 30)
	for j := range images {
		repo := fmt.Sprintf("registry.example.net/team-%02d/svc-%03d", j%40, j)
		images[j] = corev1.ContainerImage{SizeBytes: int64(20_000_000 + j*1_000_003),
			Names: []string{fmt.Sprintf("%s@sha256:%064x", repo, j), fmt.Sprintf("%s:v1.%d.0", repo, j)}}
	}
	manager := func(name, sub, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: name, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
			Time: &benchEpoch, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields), Subresource: sub}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID(fmt.Sprintf("9a1b%04x-2c3d-4e5f-8a9b-%012x", i%65536, i)),
			ResourceVersion: fmt.Sprint(200000 + i), CreationTimestamp: benchEpoch, Labels: labels,
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				"csi.volume.kubernetes.io/nodeid":                        fmt.Sprintf(`{"csi.hetzner.cloud":"%d"}`, 40000000+i),
				"cluster.k8s.io/machine":                                 "kube-system/" + name,
			},
			ManagedFields: []metav1.ManagedFieldsEntry{
				manager("kubelet", "", nodeMetaFields),
				manager("kubelet", "status", nodeStatusFields),
				manager("kube-controller-manager", "", `{"f:metadata":{"f:annotations":{"f:node.alpha.kubernetes.io/ttl":{}}},"f:spec":{"f:podCIDR":{},"f:podCIDRs":{".":{},"v:\"10.244.3.0/24\"":{}}}}`),
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", i%250), PodCIDRs: []string{fmt.Sprintf("10.244.%d.0/24", i%250)},
			ProviderID: fmt.Sprintf("hcloud://%d", 40000000+i)},
		Status: corev1.NodeStatus{
			Capacity: resources, Allocatable: resources,
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeNetworkUnavailable, corev1.ConditionFalse, "CiliumIsUp", "Cilium is running on this node"),
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250%250, i%250)},
				{Type: corev1.NodeExternalIP, Address: fmt.Sprintf("203.0.%d.%d", i/250%250, i%250)},
				{Type: corev1.NodeHostName, Address: name}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%032x", i+1),
				BootID: fmt.Sprintf("%032x", i+2), KernelVersion: "6.8.0-60-generic", OSImage: "Ubuntu 24.04.2 LTS",
				ContainerRuntimeVersion: "containerd://2.1.3", KubeletVersion: "v1.35.5", OperatingSystem: "linux",
				Architecture: "amd64"},
			Images: images,
		},
	}
}

// A Warning event from the kubelet about a pod.
func benchEvent(i int) *corev1.Event {
	ns, pod := fmt.Sprintf("team-%02d", i%40), fmt.Sprintf("svc-%03d-6b8d9c7f5-%05x", i%300, i)
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", pod, i), Namespace: ns,
			ResourceVersion: fmt.Sprint(300000 + i), CreationTimestamp: benchEpoch,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &benchEpoch, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(
					`{"f:count":{},"f:firstTimestamp":{},"f:involvedObject":{},"f:lastTimestamp":{},"f:message":{},"f:reason":{},"f:reportingComponent":{},"f:reportingInstance":{},"f:source":{"f:component":{},"f:host":{}},"f:type":{}}`)}}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod, APIVersion: "v1",
			UID: types.UID(fmt.Sprintf("5f0c%04x-8d1e-4c2a-9b7e-%012x", i%65536, i)), FieldPath: "spec.containers{app}"},
		Reason: "BackOff", Message: "Back-off restarting failed container app in pod " + pod + "_" + ns,
		Source: corev1.EventSource{Component: "kubelet", Host: "workers-a-7f9c-00001"}, Type: corev1.EventTypeWarning,
		FirstTimestamp: benchEpoch, LastTimestamp: benchEpoch, Count: int32(1 + i%20),
		ReportingController: "kubelet", ReportingInstance: "workers-a-7f9c-00001",
	}
}

// Field sets the size of those a real cluster's managers record.
const (
	containerFields = `{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"HTTP_ADDR\"}":{".":{},"f:name":{},"f:value":{}},` +
		`"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},` +
		`"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"POD_NAMESPACE\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},` +
		`"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:livenessProbe":{".":{},"f:failureThreshold":{},` +
		`"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},` +
		`"f:timeoutSeconds":{}},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},` +
		`"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},` +
		`"f:httpGet":{".":{},"f:path":{},"f:port":{},"f:scheme":{}},"f:periodSeconds":{},"f:successThreshold":{},` +
		`"f:timeoutSeconds":{}},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},` +
		`"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},` +
		`"k:{\"mountPath\":\"/etc/app\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}}}}`
	podSpecFields = `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/restartedAt":{},"f:prometheus.io/port":{},` +
		`"f:prometheus.io/scrape":{}},"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:app.kubernetes.io/name":{},` +
		`"f:app.kubernetes.io/part-of":{},"f:pod-template-hash":{},"f:version":{}},"f:ownerReferences":{".":{},` +
		`"k:{\"uid\":\"5f0c0001-8d1e-4c2a-9b7e-000000000001-rs\"}":{}}},"f:spec":{"f:containers":{` +
		`"k:{\"name\":\"app\"}":` + containerFields + `,"k:{\"name\":\"proxy\"}":` + containerFields + `},` +
		`"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:initContainers":{".":{},"k:{\"name\":\"migrate\"}":` + containerFields +
		`},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{},` +
		`"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:name":{}},"f:name":{}}}}}`
	podStatusFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},` +
		`"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},` +
		`"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},` +
		`"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},` +
		`"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},` +
		`"f:hostIP":{},"f:hostIPs":{},"f:initContainerStatuses":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},` +
		`"k:{\"ip\":\"10.244.1.17\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`
	nodeMetaFields = `{"f:metadata":{"f:annotations":{".":{},"f:csi.volume.kubernetes.io/nodeid":{},` +
		`"f:volumes.kubernetes.io/controller-managed-attach-detach":{}},"f:labels":{".":{},"f:beta.kubernetes.io/arch":{},` +
		`"f:beta.kubernetes.io/instance-type":{},"f:beta.kubernetes.io/os":{},"f:failure-domain.beta.kubernetes.io/region":{},` +
		`"f:failure-domain.beta.kubernetes.io/zone":{},"f:kubernetes.io/arch":{},"f:kubernetes.io/hostname":{},` +
		`"f:kubernetes.io/os":{},"f:node.kubernetes.io/instance-type":{},"f:topology.kubernetes.io/region":{},` +
		`"f:topology.kubernetes.io/zone":{}}},"f:spec":{"f:providerID":{}}}`
	nodeCondition    = `{".":{},"f:lastHeartbeatTime":{},"f:lastTransitionTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}`
	nodeStatusFields = `{"f:status":{"f:addresses":{".":{},"k:{\"type\":\"ExternalIP\"}":{".":{},"f:address":{},"f:type":{}},` +
		`"k:{\"type\":\"Hostname\"}":{".":{},"f:address":{},"f:type":{}},"k:{\"type\":\"InternalIP\"}":{".":{},"f:address":{},` +
		`"f:type":{}}},"f:allocatable":{".":{},"f:cpu":{},"f:ephemeral-storage":{},"f:hugepages-1Gi":{},"f:hugepages-2Mi":{},` +
		`"f:memory":{},"f:pods":{}},"f:capacity":{".":{},"f:cpu":{},"f:ephemeral-storage":{},"f:hugepages-1Gi":{},` +
		`"f:hugepages-2Mi":{},"f:memory":{},"f:pods":{}},"f:conditions":{".":{},"k:{\"type\":\"DiskPressure\"}":` + nodeCondition +
		`,"k:{\"type\":\"MemoryPressure\"}":` + nodeCondition + `,"k:{\"type\":\"NetworkUnavailable\"}":` + nodeCondition +
		`,"k:{\"type\":\"PIDPressure\"}":` + nodeCondition + `,"k:{\"type\":\"Ready\"}":` + nodeCondition +
		`},"f:daemonEndpoints":{"f:kubeletEndpoint":{"f:Port":{}}},"f:images":{},"f:nodeInfo":{"f:architecture":{},` +
		`"f:bootID":{},"f:containerRuntimeVersion":{},"f:kernelVersion":{},"f:kubeProxyVersion":{},"f:kubeletVersion":{},` +
		`"f:machineID":{},"f:operatingSystem":{},"f:osImage":{},"f:systemUUID":{}}}}`
)

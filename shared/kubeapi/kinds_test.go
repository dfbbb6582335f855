package kubeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

var t0 = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

// fullNode is a node as a kubelet reports it, with something in every part
// the decoder steps over.
func fullNode(name string, labels, annotations map[string]string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: "n-1", ResourceVersion: "811", Labels: labels, Annotations: annotations,
			CreationTimestamp: metav1.NewTime(t0),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`), Subresource: "status"}},
		},
		Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24", ProviderID: "hcloud://42",
			Taints: []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16331204Ki"),
				corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("150Gi"),
			},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m")},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
					LastHeartbeatTime: metav1.NewTime(t0)},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.4"}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: "m", KernelVersion: "6.8.0", OSImage: "Ubuntu 24.04",
				ContainerRuntimeVersion: "containerd://2.0.0", KubeletVersion: "v1.35.2", OperatingSystem: "linux", Architecture: "amd64"},
			Images: []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 320368}},
		},
	}
}

// asNode is what Node must hold of a fully decoded node.
func asNode(n *corev1.Node) Node {
	out := Node{ObjectMeta: keyMeta(&n.ObjectMeta), Status: NodeStatus{NodeInfo: NodeInfo{KubeletVersion: n.Status.NodeInfo.KubeletVersion}}}
	out.Labels = n.Labels
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := n.Status.Capacity[r]; ok {
			if out.Status.Capacity == nil {
				out.Status.Capacity = map[string]resource.Quantity{}
			}
			out.Status.Capacity[string(r)] = q
		}
	}
	for _, c := range n.Status.Conditions {
		out.Status.Conditions = append(out.Status.Conditions, Condition{Type: string(c.Type), Status: string(c.Status)})
	}
	return out
}

// keyMeta is what every kind's decoder keeps of an object's metadata.
func keyMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: keptName(m.Name), Namespace: m.Namespace, ResourceVersion: m.ResourceVersion}
	for k, v := range m.Annotations {
		if strings.HasPrefix(k, "k8s.io/initial-events-") {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out
}

// keptName is the name a kind keeps: longer than 253 bytes, which only an
// Event's may be, it is "sha256-" and the hex digest of the name.
func keptName(name string) string {
	if len(name) <= 253 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// sameNode compares quantities by value: a parsed quantity caches its
// string form, which an equal one may not have.
func sameNode(a, b Node) bool {
	if len(a.Status.Capacity) != len(b.Status.Capacity) {
		return false
	}
	for k, q := range a.Status.Capacity {
		if p, ok := b.Status.Capacity[k]; !ok || q.Cmp(p) != 0 {
			return false
		}
	}
	a.Status.Capacity, b.Status.Capacity = nil, nil
	return reflect.DeepEqual(a, b)
}

func TestNode_KeepsKeyLabelsCapacityConditionsAndKubeletVersion(t *testing.T) {
	in := fullNode("wrk-a", map[string]string{"node-role.kubernetes.io/worker": "", "node.kubernetes.io/instance-type": "cx32"},
		map[string]string{"node.alpha.kubernetes.io/ttl": "0", "k8s.io/initial-events-end": "true"})
	data, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got Node
	if err := got.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	want := Node{
		ObjectMeta: metav1.ObjectMeta{Name: "wrk-a", ResourceVersion: "811",
			Labels:      map[string]string{"node-role.kubernetes.io/worker": "", "node.kubernetes.io/instance-type": "cx32"},
			Annotations: map[string]string{"k8s.io/initial-events-end": "true"}},
		Status: NodeStatus{
			Capacity:   map[string]resource.Quantity{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16331204Ki")},
			Conditions: []Condition{{Type: "MemoryPressure", Status: "False"}, {Type: "Ready", Status: "True"}},
			NodeInfo:   NodeInfo{KubeletVersion: "v1.35.2"},
		},
	}
	if !sameNode(got, want) {
		t.Fatalf("decoded %#v\nwant %#v", got, want)
	}
	if q := got.Status.Capacity["memory"]; q.String() != "16331204Ki" {
		t.Errorf("memory capacity reads %s, want 16331204Ki", q.String())
	}
}

func TestNodeList_DecodesTheListMetaAndEveryItemInOrder(t *testing.T) {
	list := &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "90", Continue: "next"},
		Items: []corev1.Node{*fullNode("ctl-a", nil, nil), *fullNode("wrk-a", map[string]string{"a": "b"}, nil)}}
	data, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got NodeList
	if err := got.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.ListMeta, list.ListMeta) || len(got.Items) != 2 {
		t.Fatalf("decoded %#v", got)
	}
	for i := range list.Items {
		if want := asNode(&list.Items[i]); !sameNode(got.Items[i], want) {
			t.Errorf("item %d: %#v, want %#v", i, got.Items[i], want)
		}
	}
}

func TestList_RefusesProtobufForAKindReadAsJSONOnly(t *testing.T) {
	data, err := (&corev1.ConfigMapList{Items: []corev1.ConfigMap{{Data: map[string]string{"k": "v"}}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"with an item": data, "empty": nil} {
		var got ConfigMapList
		err := got.Unmarshal(b)
		if err == nil || err.Error() != "decode ConfigMapList: the kind is read as JSON only" {
			t.Errorf("%s: decoded a ConfigMapList from protobuf: %v, %#v", name, err, got)
		}
	}
	// Control: a kind with a protobuf decoder takes the same empty message.
	var nodes NodeList
	if err := nodes.Unmarshal(nil); err != nil {
		t.Fatalf("empty NodeList: %v", err)
	}
}

// fullEvent is a Warning event with every field set, a series included.
func fullEvent(name string, count int32, series bool) *corev1.Event {
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: "e-1", ResourceVersion: "77",
			CreationTimestamp: metav1.NewTime(t0), Labels: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Machine", Namespace: "kube-system", Name: "wrk-a", UID: "m-1",
			APIVersion: "cluster.k8s.io/v1alpha1", FieldPath: "spec"},
		Reason: "ReconcilingError", Message: "failed to create machine", Source: corev1.EventSource{Component: "machine-controller"},
		FirstTimestamp: metav1.NewTime(t0.Add(-time.Hour)), LastTimestamp: metav1.NewTime(t0.Add(-time.Minute)),
		Count: count, Type: "Warning", EventTime: metav1.NewMicroTime(t0.Add(-2 * time.Minute)),
		Action: "Create", ReportingController: "machine-controller", ReportingInstance: "mc-0",
		Related: &corev1.ObjectReference{Kind: "Node", Name: "wrk-a"},
	}
	if series {
		e.Series = &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(t0.Add(-30 * time.Second))}
	}
	return e
}

// asEvent is what Event must hold of a fully decoded event.
func asEvent(e *corev1.Event) Event {
	meta := keyMeta(&e.ObjectMeta)
	meta.CreationTimestamp = e.CreationTimestamp
	out := Event{ObjectMeta: meta, Reason: e.Reason, Message: e.Message, LastTimestamp: e.LastTimestamp,
		Count: e.Count, Type: e.Type, EventTime: e.EventTime,
		InvolvedObject: ObjectReference{Kind: e.InvolvedObject.Kind, Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name}}
	if e.Series != nil {
		out.Series = &EventSeries{LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// sameEvent compares times by instant: protobuf gives local times.
func sameEvent(a, b Event) bool {
	times := func(e *Event) []time.Time {
		ts := []time.Time{e.CreationTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time}
		e.CreationTimestamp, e.LastTimestamp, e.EventTime = metav1.Time{}, metav1.Time{}, metav1.MicroTime{}
		if e.Series != nil {
			ts = append(ts, e.Series.LastObservedTime.Time)
			e.Series = &EventSeries{}
		}
		return ts
	}
	ta, tb := times(&a), times(&b)
	for i := range min(len(ta), len(tb)) {
		if !ta[i].Equal(tb[i]) {
			return false
		}
	}
	return len(ta) == len(tb) && reflect.DeepEqual(a, b)
}

func TestEvent_KeepsWhatTheBeatReads(t *testing.T) {
	for _, in := range []*corev1.Event{fullEvent("wrk-a.1", 3, true), fullEvent("wrk-a.2", -2, false)} {
		data, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var got Event
		if err := got.Unmarshal(data); err != nil {
			t.Fatal(err)
		}
		if want := asEvent(in); !sameEvent(got, want) {
			t.Fatalf("decoded %#v\nwant %#v", got, want)
		}
		if got.Labels != nil || got.InvolvedObject.Kind != "Machine" || got.Count != in.Count ||
			!got.LastTimestamp.Equal(&metav1.Time{Time: t0.Add(-time.Minute)}) {
			t.Fatalf("decoded %#v", got)
		}
	}
}

// core/v1 never validates an Event's name, so anyone who may create
// Events may make it as long as the object: kept whole, the observer's cache
// would hold it twice per event (record and key). Past the longest name any
// other kind may have, the name is kept as its digest, from protobuf and
// JSON alike, and the decoded object keeps nothing of the long one.
func TestEvent_ANameLongerThanAnyOtherKindsIsKeptAsItsDigest(t *testing.T) {
	apiserver := newAPIServerCodec(t)
	for _, tc := range []struct {
		name, want string
	}{
		{strings.Repeat("e", 253), strings.Repeat("e", 253)},
		{strings.Repeat("e", 254), "sha256-8373bdd57edf84e75808f955b63d0e4964c42e7688ae04969cf8078e3dc61be3"},
		{strings.Repeat("e", 1<<20), ""},
	} {
		if tc.want == "" {
			sum := sha256.Sum256([]byte(tc.name))
			tc.want = "sha256-" + hex.EncodeToString(sum[:])
		}
		in := fullEvent(tc.name, 3, true)
		for _, mediaType := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
			data := apiserver.object(in)
			if mediaType == runtime.ContentTypeJSON {
				data = apiserver.jsonObject(in)
			}
			got := decodeAs(t, codecs, mediaType, data).(*Event)
			if got.Name != tc.want {
				t.Errorf("%s, a %d-byte name: kept %.80q, want %.80q", mediaType, len(tc.name), got.Name, tc.want)
			}
		}
	}
}

func TestEventList_DecodesTheListMetaAndEveryItemInOrder(t *testing.T) {
	list := &corev1.EventList{ListMeta: metav1.ListMeta{ResourceVersion: "91"},
		Items: []corev1.Event{*fullEvent("a", 1, false), *fullEvent("b", 2, true)}}
	data, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got EventList
	if err := got.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.ListMeta, list.ListMeta) || len(got.Items) != 2 {
		t.Fatalf("decoded %#v", got)
	}
	for i := range list.Items {
		if want := asEvent(&list.Items[i]); !sameEvent(got.Items[i], want) {
			t.Errorf("item %d: %#v, want %#v", i, got.Items[i], want)
		}
	}
}

func TestEvent_RefusesACountInTheWrongWireType(t *testing.T) {
	// Field 8 (count) as a length-delimited string instead of a varint.
	if err := new(Event).Unmarshal([]byte{8<<3 | 2, 1, 'x'}); err == nil {
		t.Fatal("accepted a count sent as bytes")
	}
	if err := new(corev1.Event).Unmarshal([]byte{8<<3 | 2, 1, 'x'}); err == nil {
		t.Fatal("control: the generated decoder accepts it too, so the case proves nothing")
	}
}

// Every kind registers under the same group, version and kind as its
// k8s.io/api counterpart, and is decoded from that counterpart's JSON
// (the content type of every kind without a protobuf decoder here).
func TestKinds_MatchTheirAPICounterparts(t *testing.T) {
	holder, seconds, renew := "actor-1", int32(15), metav1.NewMicroTime(t0)
	renewLocal := metav1.NewMicroTime(t0.Local()) // as a decoded time is
	immutable := true
	pairs := []struct {
		ours, theirs runtime.Object
		want         runtime.Object // what ours must hold after decoding theirs' JSON
	}{
		{&Node{}, &corev1.Node{}, nil},
		{&NodeList{}, &corev1.NodeList{}, nil},
		{&Event{}, &corev1.Event{}, nil},
		{&EventList{}, &corev1.EventList{}, nil},
		{&Pod{}, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-ctl-a", Namespace: "kube-system", Labels: map[string]string{"component": "kube-scheduler"}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.2",
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, Reason: "r"}}},
		}, &Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler-ctl-a", Namespace: "kube-system", Labels: map[string]string{"component": "kube-scheduler"}},
			Status:     PodStatus{Phase: "Running", Conditions: []Condition{{Type: "Ready", Status: "True"}}},
		}},
		{&PodList{}, &corev1.PodList{}, nil},
		{&ConfigMap{}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-actions"}, Data: map[string]string{"k": "v"},
			BinaryData: map[string][]byte{"b": {1}}},
			&ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-actions"}, Data: map[string]string{"k": "v"}}},
		{&ConfigMapList{}, &corev1.ConfigMapList{}, nil},
		{&Secret{}, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-agent"}, Immutable: &immutable,
			Data: map[string][]byte{"agent-token": []byte("tok")}, Type: corev1.SecretTypeOpaque},
			&Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-agent"}, Immutable: &immutable,
				Data: map[string][]byte{"agent-token": []byte("tok")}, Type: SecretTypeOpaque}},
		{&SecretList{}, &corev1.SecretList{}, nil},
		{&Lease{}, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-actor"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renew, AcquireTime: &renew}},
			&Lease{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-actor"},
				Spec: LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renewLocal}}},
		{&LeaseList{}, &coordinationv1.LeaseList{}, nil},
		{&CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
			Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kubelet-serving", Request: []byte("req")},
			Status: certificatesv1.CertificateSigningRequestStatus{Certificate: []byte("cert"),
				Conditions: []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}}},
			&CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "csr-1"},
				Status: CSRStatus{Certificate: []byte("cert"), Conditions: []Condition{{Type: "Approved", Status: "True"}}}}},
		{&CertificateSigningRequestList{}, &certificatesv1.CertificateSigningRequestList{}, nil},
	}
	for _, p := range pairs {
		name := reflect.TypeOf(p.ours).Elem().Name()
		t.Run(name, func(t *testing.T) {
			ours, _, err := scheme.ObjectKinds(p.ours)
			if err != nil {
				t.Fatal(err)
			}
			theirs, _, err := clientgoscheme.Scheme.ObjectKinds(p.theirs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Fatalf("registered as %v, the API's kind is %v", ours, theirs)
			}
			if p.want == nil {
				return
			}
			data, err := json.Marshal(p.theirs)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := codecs.UniversalDeserializer().Decode(data, &theirs[0], nil)
			if err != nil {
				t.Fatal(err)
			}
			got.GetObjectKind().SetGroupVersionKind(p.want.GetObjectKind().GroupVersionKind())
			if !reflect.DeepEqual(got, p.want) {
				t.Fatalf("decoded %#v\nwant %#v", got, p.want)
			}
		})
	}
}

// The register command creates the identity Secret from this package's
// Secret: its JSON must read back as the API's Secret with every field kept.
func TestSecret_EncodesAsTheAPIsSecret(t *testing.T) {
	immutable := true
	in := &Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "kubehz-agent", Labels: map[string]string{"a": "b"}},
		Immutable: &immutable, Type: SecretTypeOpaque, Data: map[string][]byte{"agent-token": {0, 1, 255}}}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	enc := codecs.WithoutConversion().EncoderForVersion(info.Serializer, coreV1)
	data, err := runtime.Encode(enc, in)
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Secret
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: in.ObjectMeta, Immutable: &immutable, Type: corev1.SecretTypeOpaque, Data: in.Data}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("encoded %s", data)
	}
}

// FuzzNode_ReadsWhatTheGeneratedDecoderReads: on any bytes the decoder
// neither panics nor loops, and whenever it and client-go's generated
// decoder both accept them, they read the same (see the pod's fuzz target
// for why either may refuse what the other accepts).
func FuzzNode_ReadsWhatTheGeneratedDecoderReads(f *testing.F) {
	for _, n := range []*corev1.Node{
		fullNode("wrk-a", map[string]string{"node-role.kubernetes.io/worker": ""}, map[string]string{"k8s.io/initial-events-end": "true"}),
		{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1"}},
	} {
		data, err := n.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Node
		gotErr := got.Unmarshal(data)
		var full corev1.Node
		if err := full.Unmarshal(data); err != nil || gotErr != nil {
			return
		}
		if want := asNode(&full); !sameNode(got, want) {
			t.Fatalf("decoded %#v, the generated decoder read %#v", got, want)
		}
	})
}

// FuzzEvent_ReadsWhatTheGeneratedDecoderReads is the same for events.
func FuzzEvent_ReadsWhatTheGeneratedDecoderReads(f *testing.F) {
	for _, e := range []*corev1.Event{fullEvent("a", 3, true), fullEvent("b", -1, false), {}} {
		data, err := e.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Event
		gotErr := got.Unmarshal(data)
		var full corev1.Event
		if err := full.Unmarshal(data); err != nil || gotErr != nil {
			return
		}
		if want := asEvent(&full); !sameEvent(got, want) {
			t.Fatalf("decoded %#v, the generated decoder read %#v", got, want)
		}
	})
}

func TestScheme_RegistersEveryKindUnderItsAPIName(t *testing.T) {
	for obj, want := range map[runtime.Object]string{
		&Node{}: "/v1, Kind=Node", &NodeList{}: "/v1, Kind=NodeList", &EventList{}: "/v1, Kind=EventList",
		&PodList{}: "/v1, Kind=PodList", &ConfigMapList{}: "/v1, Kind=ConfigMapList", &SecretList{}: "/v1, Kind=SecretList",
		&LeaseList{}:                     "coordination.k8s.io/v1, Kind=LeaseList",
		&CertificateSigningRequestList{}: "certificates.k8s.io/v1, Kind=CertificateSigningRequestList",
	} {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil || len(gvks) != 1 || gvks[0].String() != want {
			t.Errorf("%T registers as %v (%v), want %s", obj, gvks, err, want)
		}
	}
	if gvks, _, err := phaseScheme.ObjectKinds(&PodPhaseList{}); err != nil || gvks[0].String() != "/v1, Kind=PodList" {
		t.Errorf("PodPhaseList registers as %v (%v), want the v1 PodList", gvks, err)
	}
}

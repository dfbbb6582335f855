package kubeapi

import (
	"bytes"
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	restclientwatch "k8s.io/client-go/rest/watch"
)

// fullPod is a pod with something in every part the decoder steps over:
// labels, its own annotations, owner references, managedFields, a spec and
// the rest of the status.
func fullPod(name, phase string, annotations map[string]string) *corev1.Pod {
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: "web-", Namespace: "shop", UID: "5f0c-1", ResourceVersion: "4711",
			Generation: 3, Labels: map[string]string{"app": "web"}, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-6d", UID: "rs"}},
			Finalizers:      []string{"example.net/keep"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`), Subresource: "status"}},
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.example.net/web:1", Args: []string{"--port=8080"}}},
			NodeName:                      "wrk-a",
			TerminationGracePeriodSeconds: &grace,
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodPhase(phase), HostIP: "10.0.0.4", PodIP: "10.244.0.9",
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 2}},
		},
	}
}

// asPhase is what PodPhase must hold of a fully decoded pod.
func asPhase(p *corev1.Pod) PodPhase {
	return PodPhase{ObjectMeta: keyMeta(&p.ObjectMeta), Status: PodPhaseStatus{Phase: string(p.Status.Phase)}}
}

func samePhase(a, b PodPhase) bool {
	return a.Name == b.Name && a.Namespace == b.Namespace && a.ResourceVersion == b.ResourceVersion &&
		a.Status == b.Status && maps.Equal(a.Annotations, b.Annotations) &&
		reflect.DeepEqual(a.ObjectMeta, metav1.ObjectMeta{Name: a.Name, Namespace: a.Namespace,
			ResourceVersion: a.ResourceVersion, Annotations: a.Annotations})
}

func TestPodPhase_KeepsKeyVersionPhaseAndTheWatchListBookmarkOnly(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want PodPhase
	}{
		{
			name: "a running pod keeps its key, version and phase, none of its own annotations",
			pod:  fullPod("web-0", "Running", map[string]string{"prometheus.io/scrape": "true"}),
			want: PodPhase{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", ResourceVersion: "4711"},
				Status: PodPhaseStatus{Phase: PodRunning}},
		},
		{
			name: "a phase the counts do not know is kept as sent",
			pod:  fullPod("web-1", "Bogus", nil),
			want: PodPhase{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", ResourceVersion: "4711"},
				Status: PodPhaseStatus{Phase: "Bogus"}},
		},
		{
			name: "the bookmark that ends a watch-list keeps its annotation among others",
			pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9000", Annotations: map[string]string{
				metav1.InitialEventsAnnotationKey: "true", "example.net/other": "x"}}},
			want: PodPhase{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9000",
				Annotations: map[string]string{"k8s.io/initial-events-end": "true"}}},
		},
		{
			name: "an empty pod is an empty record",
			pod:  &corev1.Pod{},
			want: PodPhase{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.pod.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var got PodPhase
			if err := got.Unmarshal(data); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("decoded\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestPodPhaseList_DecodesTheListMetaAndEveryItemInOrder(t *testing.T) {
	in := &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "812", Continue: "next-page", RemainingItemCount: new(int64(7))},
		Items:    []corev1.Pod{*fullPod("web-0", "Running", nil), *fullPod("web-1", "Pending", nil), *fullPod("web-2", "", nil)},
	}
	data, err := in.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got PodPhaseList
	if err := got.Unmarshal(data); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !reflect.DeepEqual(got.ListMeta, in.ListMeta) {
		t.Errorf("list meta %#v, want %#v", got.ListMeta, in.ListMeta)
	}
	var want []PodPhase
	for i := range in.Items {
		want = append(want, asPhase(&in.Items[i]))
	}
	if !reflect.DeepEqual(got.Items, want) {
		t.Errorf("items\n%#v\nwant\n%#v", got.Items, want)
	}
}

func TestPodPhase_RefusesTruncatedAndMistypedMessages(t *testing.T) {
	good, err := fullPod("web-0", "Running", nil).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"cut inside the last field", good[:len(good)-3]},
		{"a length past the end", []byte{0x0a, 0x40, 0x0a}},
		{"metadata sent as a number", []byte{0x08, 0x01}},
		{"the phase sent as a number", []byte{0x1a, 0x02, 0x08, 0x01}},
		{"the name sent as a number", []byte{0x0a, 0x02, 0x08, 0x01}},
		{"field number zero", []byte{0x02, 0x00}},
		{"an end of group with no group", []byte{0x0c}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := new(corev1.Pod).Unmarshal(tt.data); err == nil {
				t.Fatalf("the generated decoder accepts %x: not a case to refuse", tt.data)
			}
			var p PodPhase
			if err := p.Unmarshal(tt.data); err == nil {
				t.Fatalf("decoded %x to %#v, want an error", tt.data, p)
			}
		})
	}
}

// TestPodPhases_DecodeTheApiserversWatchStream feeds a protobuf watch stream
// as the apiserver frames it through the decoder the pods client uses: the
// objects come out as PodPhases, the bookmark with its annotation.
func TestPodPhases_DecodeTheApiserversWatchStream(t *testing.T) {
	bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9000",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	events := []watch.Event{
		{Type: watch.Added, Object: fullPod("web-0", "Running", nil)},
		{Type: watch.Modified, Object: fullPod("web-0", "Failed", nil)},
		{Type: watch.Bookmark, Object: bookmark},
		{Type: watch.Deleted, Object: fullPod("web-0", "Failed", nil)},
	}
	stream := newAPIServerCodec(t).stream(events...)

	info, ok := runtime.SerializerInfoForMediaType(phaseCodecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok || info.StreamSerializer == nil {
		t.Fatal("the pods client has no protobuf stream decoder")
	}
	objects := phaseCodecs.UniversalDeserializer()
	frames := info.StreamSerializer.NewFrameReader(readCloser{bytes.NewReader(stream)})
	dec := restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objects)
	defer dec.Close()
	for i, e := range events {
		typ, obj, err := dec.Decode()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		got, ok := obj.(*PodPhase)
		if !ok {
			t.Fatalf("event %d decoded to %T, want *PodPhase", i, obj)
		}
		want := asPhase(e.Object.(*corev1.Pod))
		got.TypeMeta = metav1.TypeMeta{}
		if typ != e.Type || !reflect.DeepEqual(*got, want) {
			t.Fatalf("event %d: %s %#v, want %s %#v", i, typ, *got, e.Type, want)
		}
	}
}

// TestPodPhases_DecodeJSONToo: a server or proxy that answers JSON instead
// of protobuf (the client accepts both) still yields PodPhases, holding what
// protobuf gives them: not the labels.
func TestPodPhases_DecodeJSONToo(t *testing.T) {
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"shop","resourceVersion":"4711",` +
		`"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"web:1"}]},"status":{"phase":"Running","podIP":"10.0.0.9"}}`
	obj, _, err := phaseCodecs.UniversalDeserializer().Decode([]byte(body), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := obj.(*PodPhase)
	if !ok {
		t.Fatalf("decoded to %T, want *PodPhase", obj)
	}
	want := PodPhase{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop", ResourceVersion: "4711"},
		Status: PodPhaseStatus{Phase: PodRunning}}
	got.TypeMeta = metav1.TypeMeta{}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("decoded %#v, want %#v", *got, want)
	}
}

func TestPodPhase_DeepCopiesShareNothing(t *testing.T) {
	in := &PodPhaseList{ListMeta: metav1.ListMeta{ResourceVersion: "5", RemainingItemCount: new(int64(3))}, Items: []PodPhase{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}},
		Status:     PodPhaseStatus{Phase: PodRunning}}}}
	out := in.DeepCopyObject().(*PodPhaseList)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("copy %#v differs from %#v", out, in)
	}
	// DeepCopyInto is PodPhase's own, not the embedded ObjectMeta's.
	var item PodPhase
	in.Items[0].DeepCopyInto(&item)
	if !reflect.DeepEqual(item, in.Items[0]) {
		t.Fatalf("DeepCopyInto copied %#v of %#v", item, in.Items[0])
	}
	out.Items[0].Annotations["k8s.io/initial-events-end"] = "false"
	out.Items[0].Status.Phase = PodFailed
	*out.RemainingItemCount = 4
	if in.Items[0].Annotations["k8s.io/initial-events-end"] != "true" || in.Items[0].Status.Phase != PodRunning ||
		*in.RemainingItemCount != 3 {
		t.Fatalf("writing the copy changed the original: %#v", in.Items[0])
	}
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// FuzzPodPhase_ReadsWhatTheGeneratedDecoderReads: on any bytes the decoder
// neither panics nor loops, and whenever it and client-go's generated
// decoder both accept them, they read the same name, namespace, resource
// version, phase and watch-list annotations. Either may accept bytes the
// other refuses: this one does not look inside the fields it skips, and the
// generated one lets a map key run past its entry and a group end under
// another number (the fuzzer found both), which no apiserver writes.
func FuzzPodPhase_ReadsWhatTheGeneratedDecoderReads(f *testing.F) {
	for _, p := range []*corev1.Pod{
		fullPod("web-0", "Running", map[string]string{"a": "b", "k8s.io/initial-events-end": "true"}),
		{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1"}},
	} {
		data, err := p.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got PodPhase
		gotErr := got.Unmarshal(data)
		var full corev1.Pod
		if err := full.Unmarshal(data); err != nil || gotErr != nil {
			return
		}
		if want := asPhase(&full); !samePhase(got, want) {
			t.Fatalf("decoded %#v, the generated decoder read %#v", got, want)
		}
	})
}

// FuzzPodPhase_DecodesEveryPodTheGeneratedEncoderWrites: whatever strings a
// pod carries, the decoder accepts its encoding and reads what was written.
func FuzzPodPhase_DecodesEveryPodTheGeneratedEncoderWrites(f *testing.F) {
	f.Add("web-0", "shop", "4711", "Running", "k8s.io/initial-events-end", "true", "app")
	f.Add("", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, name, namespace, version, phase, key, value, label string) {
		in := fullPod(name, phase, map[string]string{key: value, "example.net/" + key: value})
		in.Namespace, in.ResourceVersion, in.Labels = namespace, version, map[string]string{label: value}
		data, err := in.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var got PodPhase
		if err := got.Unmarshal(data); err != nil {
			t.Fatalf("refused the encoding of %#v: %v", in, err)
		}
		if want := asPhase(in); !samePhase(got, want) {
			t.Fatalf("decoded %#v, want %#v", got, want)
		}
	})
}

// FuzzPodPhaseList_ReadsWhatTheGeneratedDecoderReads is the same for lists.
func FuzzPodPhaseList_ReadsWhatTheGeneratedDecoderReads(f *testing.F) {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"},
		Items: []corev1.Pod{*fullPod("web-0", "Running", nil), *fullPod("web-1", "Pending", nil)}}
	data, err := list.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		var got PodPhaseList
		gotErr := got.Unmarshal(data)
		var full corev1.PodList
		if err := full.Unmarshal(data); err != nil || gotErr != nil {
			return
		}
		if !reflect.DeepEqual(got.ListMeta, full.ListMeta) || len(got.Items) != len(full.Items) {
			t.Fatalf("decoded %#v, the generated decoder read %#v", got, full)
		}
		for i := range full.Items {
			if want := asPhase(&full.Items[i]); !samePhase(got.Items[i], want) {
				t.Fatalf("item %d: %#v, want %#v", i, got.Items[i], want)
			}
		}
	})
}

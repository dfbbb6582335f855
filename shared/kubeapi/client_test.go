package kubeapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPodPhases_ListAndWatchThroughTheClient serves a pod list, then a watch
// stream that ends in the apiserver's "too old" error, in protobuf as the
// apiserver frames them, and reads both through Client.PodPhases: the pods
// come out as PodPhases and the error as the Status the reflector relists on.
func TestPodPhases_ListAndWatchThroughTheClient(t *testing.T) {
	full := runtime.NewScheme()
	if err := corev1.AddToScheme(full); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(full, corev1.SchemeGroupVersion)
	enc, raw := protobuf.NewSerializer(full, full), protobuf.NewRawSerializer(full, full)
	encode := func(obj runtime.Object) []byte {
		b, err := runtime.Encode(enc, obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "812"},
		Items:    []corev1.Pod{*fullPod("web-0", "Running", nil), *fullPod("web-1", "Pending", nil)}}
	added := fullPod("web-2", "Succeeded", nil)
	added.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	expired := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
		Code: http.StatusGone, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (812)"}

	var stream bytes.Buffer
	frames := protobuf.LengthDelimitedFramer.NewFrameWriter(&stream)
	for _, e := range []metav1.WatchEvent{
		{Type: string(watch.Added), Object: runtime.RawExtension{Raw: encode(added)}},
		{Type: string(watch.Error), Object: runtime.RawExtension{Raw: encode(expired)}},
	} {
		frame, err := runtime.Encode(raw, &e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := frames.Write(frame); err != nil {
			t.Fatal(err)
		}
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/pods" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
			_, _ = w.Write(stream.Bytes())
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		_, _ = w.Write(encode(list))
	}))
	defer srv.Close()
	client, err := New(&rest.Config{Host: srv.URL, Transport: &http.Transport{DisableKeepAlives: true}})
	if err != nil {
		t.Fatal(err)
	}
	pods := client.PodPhases("")

	got, err := pods.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != "812" || len(got.Items) != 2 ||
		!samePhase(got.Items[0], asPhase(&list.Items[0])) || !samePhase(got.Items[1], asPhase(&list.Items[1])) {
		t.Fatalf("listed %#v", got)
	}

	w, err := pods.Watch(t.Context(), metav1.ListOptions{ResourceVersion: "812"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := func() watch.Event {
		select {
		case e := <-w.ResultChan():
			return e
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event within 10 s")
		}
		return watch.Event{}
	}
	if e := next(); e.Type != watch.Added {
		t.Fatalf("first event %s %#v, want ADDED", e.Type, e.Object)
	} else if p, ok := e.Object.(*PodPhase); !ok || !samePhase(*p, asPhase(added)) {
		t.Fatalf("first event carried %#v, want web-2 Succeeded", e.Object)
	}
	e := next()
	if err := apierrors.FromObject(e.Object); e.Type != watch.Error || !apierrors.IsResourceExpired(err) {
		t.Fatalf("second event %s %#v (%v), want the expired error", e.Type, e.Object, err)
	}
}

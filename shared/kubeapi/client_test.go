package kubeapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPodPhases_ListAndWatchThroughTheClient serves a pod list, then a watch
// stream that ends in the apiserver's "too old" error, in protobuf as the
// apiserver frames them, and reads both through Client.PodPhases: the pods
// come out as PodPhases and the error as the Status the reflector relists on.
func TestPodPhases_ListAndWatchThroughTheClient(t *testing.T) {
	codec := newAPIServerCodec(t)
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "812"},
		Items: []corev1.Pod{*fullPod("web-0", "Running", nil), *fullPod("web-1", "Pending", nil)}}
	added := fullPod("web-2", "Succeeded", nil)
	expired := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone,
		Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (812)"}
	stream := codec.stream(watch.Event{Type: watch.Added, Object: added}, watch.Event{Type: watch.Error, Object: expired})

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/pods" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
			_, _ = w.Write(stream)
			return
		}
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		_, _ = w.Write(codec.object(list))
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

package kubeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

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

// TestClient_ReadsNodesAndEventsInProtobufAndTheRestInJSON serves each
// content type only to a client that asks for it: nodes and an event watch
// in protobuf; CSRs, a Lease and, through the core JSON client that also
// reads ConfigMaps and Pods, a created Secret in JSON, checking that the
// apiserver would read the Secret as a v1 Secret.
func TestClient_ReadsNodesAndEventsInProtobufAndTheRestInJSON(t *testing.T) {
	codec := newAPIServerCodec(t)
	nodes := &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: "90"}, Items: []corev1.Node{*fullNode("wrk-a", nil, nil)}}
	event := fullEvent("wrk-a.1", 3, true)
	holder := "actor-1"
	lease := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"kubehz-actor","namespace":"kubehz-system"},` +
		`"spec":{"holderIdentity":"actor-1","leaseDurationSeconds":15,"renewTime":"2026-07-06T12:00:00.000000Z"}}`
	csrs := `{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequestList","metadata":{"resourceVersion":"7"},` +
		`"items":[{"metadata":{"name":"csr-1"},"spec":{"request":"cmVx","signerName":"kubernetes.io/kubelet-serving"},` +
		`"status":{"certificate":"Y2VydA==","conditions":[{"type":"Approved","status":"True"}]}}]}`
	var created corev1.Secret
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept := r.Header.Get("Accept")
		protobuf := strings.HasPrefix(accept, runtime.ContentTypeProtobuf)
		switch {
		case r.URL.Path == "/api/v1/nodes" && protobuf:
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
			_, _ = w.Write(codec.object(nodes))
		case r.URL.Path == "/api/v1/namespaces/shop/events" && protobuf && r.URL.Query().Get("watch") == "true":
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
			_, _ = w.Write(codec.stream(watch.Event{Type: watch.Added, Object: event}))
		case r.URL.Path == "/apis/certificates.k8s.io/v1/certificatesigningrequests" && accept == runtime.ContentTypeJSON:
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			_, _ = w.Write([]byte(csrs))
		case r.URL.Path == "/apis/coordination.k8s.io/v1/namespaces/kubehz-system/leases/kubehz-actor" && accept == runtime.ContentTypeJSON:
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			_, _ = w.Write([]byte(lease))
		case r.URL.Path == "/api/v1/namespaces/kubehz-system/secrets" && r.Method == http.MethodPost &&
			r.Header.Get("Content-Type") == runtime.ContentTypeJSON:
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &created); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", runtime.ContentTypeJSON)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String()+" accepting "+accept, http.StatusTeapot)
		}
	}))
	defer srv.Close()
	client, err := New(&rest.Config{Host: srv.URL, Transport: &http.Transport{DisableKeepAlives: true}})
	if err != nil {
		t.Fatal(err)
	}

	gotNodes, err := client.Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotNodes.Items) != 1 || !sameNode(gotNodes.Items[0], asNode(&nodes.Items[0])) {
		t.Fatalf("listed %#v", gotNodes)
	}

	w, err := client.Events("shop").Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	select {
	case e := <-w.ResultChan():
		if got, ok := e.Object.(*Event); !ok || e.Type != watch.Added || !sameEvent(*got, asEvent(event)) {
			t.Fatalf("watched %s %#v", e.Type, e.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10 s")
	}

	gotCSRs, err := client.CertificateSigningRequests().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotCSRs.Items) != 1 || gotCSRs.ResourceVersion != "7" || string(gotCSRs.Items[0].Status.Certificate) != "cert" ||
		!reflect.DeepEqual(gotCSRs.Items[0].Status.Conditions, []Condition{{Type: "Approved", Status: "True"}}) {
		t.Fatalf("listed %#v", gotCSRs)
	}

	gotLease, err := client.Leases("kubehz-system").Get(t.Context(), "kubehz-actor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := gotLease.Spec.HolderIdentity; h == nil || *h != holder || *gotLease.Spec.LeaseDurationSeconds != 15 ||
		!gotLease.Spec.RenewTime.Equal(&metav1.MicroTime{Time: t0}) {
		t.Fatalf("got %#v", gotLease)
	}

	secret := &Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kubehz-system", Name: "kubehz-agent"}, Type: SecretTypeOpaque,
		Data: map[string][]byte{"agent-token": []byte("tok")}}
	if _, err := client.Secrets("kubehz-system").Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if created.Kind != "Secret" || created.APIVersion != "v1" || created.Name != "kubehz-agent" ||
		string(created.Data["agent-token"]) != "tok" || created.Type != corev1.SecretTypeOpaque {
		t.Fatalf("the server received %#v", created)
	}
}

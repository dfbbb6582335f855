package kubeapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func TestServed_ReadsTheGroupVersionDocument(t *testing.T) {
	machines := schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"}
	leases := schema.GroupVersionResource{Group: "", Version: "v1", Resource: "configmaps"}
	doc := `{"kind":"APIResourceList","groupVersion":"cluster.k8s.io/v1alpha1",
		"resources":[{"name":"machines","namespaced":true,"kind":"Machine","verbs":["list","watch"]},
		{"name":"machines/status","namespaced":true,"kind":"Machine","verbs":["get"]}]}`
	cases := []struct {
		name     string
		gvr      schema.GroupVersionResource
		path     string // what the apiserver must be asked
		status   int
		body     string
		notFound bool
		err      string // other failures: a fragment of the error
	}{
		{name: "served", gvr: machines, path: "/apis/cluster.k8s.io/v1alpha1", status: 200, body: doc},
		{name: "core group", gvr: leases, path: "/api/v1", status: 200,
			body: `{"groupVersion":"v1","resources":[{"name":"configmaps"}]}`},
		{name: "group absent", gvr: machines, path: "/apis/cluster.k8s.io/v1alpha1", status: 404,
			body: "404 page not found", notFound: true},
		{name: "resource absent", gvr: schema.GroupVersionResource{Group: "cluster.k8s.io", Version: "v1alpha1",
			Resource: "machinesets"}, path: "/apis/cluster.k8s.io/v1alpha1", status: 200, body: doc, notFound: true},
		{name: "apiserver failing", gvr: machines, path: "/apis/cluster.k8s.io/v1alpha1", status: 503,
			body: "unavailable", err: "discover /apis/cluster.k8s.io/v1alpha1"},
		{name: "not a document", gvr: machines, path: "/apis/cluster.k8s.io/v1alpha1", status: 200,
			body: "<html>", err: "discover /apis/cluster.k8s.io/v1alpha1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = append(asked, r.Method+" "+r.URL.Path)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			api, err := New(&rest.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			err = ServedBy(api.Raw())(t.Context(), tc.gvr)
			switch {
			case tc.notFound:
				if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), tc.gvr.Resource) {
					t.Errorf("Served = %v, want a NotFound naming %s", err, tc.gvr.Resource)
				}
			case tc.err != "":
				if err == nil || apierrors.IsNotFound(err) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("Served = %v, want a failure containing %q", err, tc.err)
				}
			case err != nil:
				t.Errorf("Served = %v, want nil", err)
			}
			if len(asked) != 1 || asked[0] != "GET "+tc.path {
				t.Errorf("requests %v, want one GET %s", asked, tc.path)
			}
		})
	}
}

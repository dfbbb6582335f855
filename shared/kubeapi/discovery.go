package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// Served checks, from its group version's discovery document, that the
// apiserver serves gvr: nil when it does, a NotFound status error when the
// group version or the resource is absent (its CRD is not installed), any
// other error when discovery itself failed.
//
// An optional API's presence is learned this way rather than by listing it:
// a GET of a small document, readable by every authenticated user, instead
// of a LIST the audit log records as a 404 every interval.
func Served(ctx context.Context, raw rest.Interface, gvr schema.GroupVersionResource) error {
	path := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		path = "/api/" + gvr.Version
	}
	body, err := raw.Get().AbsPath(path).SetHeader("Accept", "application/json").DoRaw(ctx)
	if apierrors.IsNotFound(err) {
		return notServed(gvr)
	}
	if err != nil {
		return fmt.Errorf("discover %s: %w", path, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("discover %s: %w", path, err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return nil
		}
	}
	return notServed(gvr)
}

// ServedFunc is Served with its client bound, the shape in which the
// observer's and the actor's caches of optional APIs take it, so that their
// unit tests can answer for discovery.
type ServedFunc func(ctx context.Context, gvr schema.GroupVersionResource) error

// ServedBy binds Served to raw.
func ServedBy(raw rest.Interface) ServedFunc {
	return func(ctx context.Context, gvr schema.GroupVersionResource) error { return Served(ctx, raw, gvr) }
}

func notServed(gvr schema.GroupVersionResource) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("the apiserver does not serve %s %s (its CRD is not installed)",
			gvr.GroupVersion(), gvr.Resource),
	}}
}

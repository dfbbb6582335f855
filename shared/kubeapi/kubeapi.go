// Package kubeapi is the part of the built-in Kubernetes API the observer
// reads, on client-go's REST client with a scheme that registers only the
// types it uses.
//
// client-go's generated clientset registers every built-in API group when the
// process starts, whether or not it is used: that init work and the code it
// touches held about 10 MiB of the observer's resident memory before it read
// a single object (test/bench measures it). The actor still links the
// clientset, because tools/leaderelection does.
package kubeapi

import (
	"context"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	params = runtime.NewParameterCodec(scheme)

	// phaseCodecs decode v1 Pods as PodPhases, for the one client that
	// feeds the pod counts.
	phaseScheme = runtime.NewScheme()
	phaseCodecs = serializer.NewCodecFactory(phaseScheme)
)

func init() {
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(coordinationv1.AddToScheme(scheme))
	utilruntime.Must(certificatesv1.AddToScheme(scheme))

	phaseScheme.AddKnownTypeWithName(corev1.SchemeGroupVersion.WithKind("Pod"), &PodPhase{})
	phaseScheme.AddKnownTypeWithName(corev1.SchemeGroupVersion.WithKind("PodList"), &PodPhaseList{})
	metav1.AddToGroupVersion(phaseScheme, corev1.SchemeGroupVersion)
}

// Client reaches the built-in groups the observer reads. Its REST clients
// share one HTTP transport and one rate limiter, as a clientset's do.
type Client struct {
	core, coordination, certificates rest.Interface
	podPhases                        rest.Interface
	raw                              rest.Interface
}

// New builds the clients from cfg, which it does not modify.
func New(cfg *rest.Config) (*Client, error) {
	base := rest.CopyConfig(cfg)
	if base.UserAgent == "" {
		base.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if base.RateLimiter == nil && base.QPS > 0 {
		base.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(base.QPS, max(base.Burst, 1))
	}
	c := &Client{}
	var err error
	if c.core, err = restClient(base, "/api", corev1.SchemeGroupVersion, codecs); err != nil {
		return nil, err
	}
	if c.podPhases, err = restClient(base, "/api", corev1.SchemeGroupVersion, phaseCodecs); err != nil {
		return nil, err
	}
	if c.coordination, err = restClient(base, "/apis", coordinationv1.SchemeGroupVersion, codecs); err != nil {
		return nil, err
	}
	if c.certificates, err = restClient(base, "/apis", certificatesv1.SchemeGroupVersion, codecs); err != nil {
		return nil, err
	}
	// Non-resource paths (/version, /readyz, discovery documents) answer JSON.
	raw := rest.CopyConfig(base)
	raw.APIPath, raw.GroupVersion = "", nil
	raw.NegotiatedSerializer = codecs.WithoutConversion()
	if c.raw, err = rest.UnversionedRESTClientFor(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// restClient speaks protobuf to one built-in group version: decoding it
// costs a fraction of JSON's CPU and garbage, which at 150,000 pods is most
// of the observer's start-up work.
func restClient(base *rest.Config, apiPath string, gv schema.GroupVersion, codecs serializer.CodecFactory) (*rest.RESTClient, error) {
	c := rest.CopyConfig(base)
	c.APIPath, c.GroupVersion = apiPath, &gv
	c.NegotiatedSerializer = codecs.WithoutConversion()
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return rest.RESTClientFor(c)
}

// Raw is a client for non-resource paths such as /version and /readyz.
func (c *Client) Raw() rest.Interface { return c.raw }

// Nodes are the cluster's nodes.
func (c *Client) Nodes() Resource[*corev1.Node, *corev1.NodeList] {
	return resource(c.core, "nodes", "", &corev1.Node{}, &corev1.NodeList{})
}

// Pods in namespace; "" is every namespace.
func (c *Client) Pods(namespace string) Resource[*corev1.Pod, *corev1.PodList] {
	return resource(c.core, "pods", namespace, &corev1.Pod{}, &corev1.PodList{})
}

// PodPhases are the pods in namespace ("" is every namespace), decoded to
// name, namespace, resource version and phase only (a JSON answer, which
// only a server without protobuf would give, keeps the whole metadata).
func (c *Client) PodPhases(namespace string) Resource[*PodPhase, *PodPhaseList] {
	return resource(c.podPhases, "pods", namespace, &PodPhase{}, &PodPhaseList{})
}

// Events in namespace; "" is every namespace.
func (c *Client) Events(namespace string) Resource[*corev1.Event, *corev1.EventList] {
	return resource(c.core, "events", namespace, &corev1.Event{}, &corev1.EventList{})
}

// ConfigMaps in namespace.
func (c *Client) ConfigMaps(namespace string) Resource[*corev1.ConfigMap, *corev1.ConfigMapList] {
	return resource(c.core, "configmaps", namespace, &corev1.ConfigMap{}, &corev1.ConfigMapList{})
}

// Secrets in namespace.
func (c *Client) Secrets(namespace string) Resource[*corev1.Secret, *corev1.SecretList] {
	return resource(c.core, "secrets", namespace, &corev1.Secret{}, &corev1.SecretList{})
}

// Leases in namespace.
func (c *Client) Leases(namespace string) Resource[*coordinationv1.Lease, *coordinationv1.LeaseList] {
	return resource(c.coordination, "leases", namespace, &coordinationv1.Lease{}, &coordinationv1.LeaseList{})
}

// CertificateSigningRequests are cluster-scoped.
func (c *Client) CertificateSigningRequests() Resource[*certificatesv1.CertificateSigningRequest, *certificatesv1.CertificateSigningRequestList] {
	return resource(c.certificates, "certificatesigningrequests", "",
		&certificatesv1.CertificateSigningRequest{}, &certificatesv1.CertificateSigningRequestList{})
}

// Resource reads one kind of object. Its methods have the signatures of
// client-go's typed clients, so code written against Reader or Getter runs
// on a fake clientset in unit tests and on this in production.
type Resource[T, L runtime.Object] struct {
	client    rest.Interface
	name      string // plural resource name
	namespace string
	// Templates deep-copied per call: the type parameters are pointer
	// types, which generic code cannot allocate by itself.
	item T
	list L
}

func resource[T, L runtime.Object](client rest.Interface, name, namespace string, item T, list L) Resource[T, L] {
	return Resource[T, L]{client: client, name: name, namespace: namespace, item: item, list: list}
}

// Get reads the object called name.
func (r Resource[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.item.DeepCopyObject().(T)
	err := r.request(r.client.Get()).Name(name).VersionedParams(&opts, params).Do(ctx).Into(out)
	return out, err
}

// Create writes a new object; the register command's only write.
func (r Resource[T, L]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	out := r.item.DeepCopyObject().(T)
	err := r.request(r.client.Post()).VersionedParams(&opts, params).Body(obj).Do(ctx).Into(out)
	return out, err
}

// List reads every object opts selects.
func (r Resource[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.list.DeepCopyObject().(L)
	err := r.request(r.client.Get()).VersionedParams(&opts, params).Timeout(timeout(opts)).Do(ctx).Into(out)
	return out, err
}

// Watch streams changes to the objects opts selects.
func (r Resource[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return r.request(r.client.Get()).VersionedParams(&opts, params).Timeout(timeout(opts)).Watch(ctx)
}

func (r Resource[T, L]) request(req *rest.Request) *rest.Request {
	return req.NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.name)
}

// timeout is the server-side timeout a list or watch asked for, applied on
// the client as well so a silent connection cannot outlive it.
func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

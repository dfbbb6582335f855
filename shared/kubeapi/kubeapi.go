package kubeapi

import (
	"context"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// The group versions of the kinds this package defines.
var (
	coreV1         = schema.GroupVersion{Version: "v1"}
	coordinationV1 = schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}
	certificatesV1 = schema.GroupVersion{Group: "certificates.k8s.io", Version: "v1"}
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	params = runtime.NewParameterCodec(scheme)

	// phaseCodecs decode v1 Pods as PodPhases, for the one client that
	// feeds the pod counts; the health view's kube-system pods are Pods.
	phaseScheme = runtime.NewScheme()
	phaseCodecs = serializer.NewCodecFactory(phaseScheme)
)

func init() {
	// Lists register by name: a List's Go type name is not its kind's. A
	// slice, not a map, keeps the scheme's group order the same every start.
	for _, group := range []struct {
		gv    schema.GroupVersion
		kinds []runtime.Object
	}{
		{coreV1, []runtime.Object{&Node{}, &NodeList{}, &Event{}, &EventList{}, &Pod{}, &PodList{},
			&ConfigMap{}, &ConfigMapList{}, &Secret{}, &SecretList{}}},
		{coordinationV1, []runtime.Object{&Lease{}, &LeaseList{}}},
		{certificatesV1, []runtime.Object{&CertificateSigningRequest{}, &CertificateSigningRequestList{}}},
	} {
		for _, obj := range group.kinds {
			scheme.AddKnownTypeWithName(group.gv.WithKind(kindOf(obj)), obj)
		}
		metav1.AddToGroupVersion(scheme, group.gv)
	}

	phaseScheme.AddKnownTypeWithName(coreV1.WithKind("Pod"), &PodPhase{})
	phaseScheme.AddKnownTypeWithName(coreV1.WithKind("PodList"), &PodPhaseList{})
	metav1.AddToGroupVersion(phaseScheme, coreV1)
}

// kindOf is the kind obj registers as: its Go type name, or for a List its
// item's name and "List".
func kindOf(obj runtime.Object) string {
	t := reflect.TypeOf(obj).Elem()
	if items, ok := t.FieldByName("Items"); ok {
		return items.Type.Elem().Name() + "List"
	}
	return t.Name()
}

// +k8s:deepcopy-gen=false

// Client reaches the built-in groups the observer reads. Its REST clients
// share one HTTP transport and one rate limiter, as a clientset's do.
type Client struct {
	// Nodes, events and pod phases come in protobuf, decoded by this
	// package's partial decoders; the other kinds in JSON.
	protobuf, podPhases              rest.Interface
	core, coordination, certificates rest.Interface
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
	if c.protobuf, err = restClient(base, "/api", coreV1, codecs, runtime.ContentTypeProtobuf); err != nil {
		return nil, err
	}
	if c.podPhases, err = restClient(base, "/api", coreV1, phaseCodecs, runtime.ContentTypeProtobuf); err != nil {
		return nil, err
	}
	if c.core, err = restClient(base, "/api", coreV1, codecs, runtime.ContentTypeJSON); err != nil {
		return nil, err
	}
	if c.coordination, err = restClient(base, "/apis", coordinationV1, codecs, runtime.ContentTypeJSON); err != nil {
		return nil, err
	}
	if c.certificates, err = restClient(base, "/apis", certificatesV1, codecs, runtime.ContentTypeJSON); err != nil {
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

// restClient speaks contentType to one built-in group version. Protobuf is
// for the kinds there are many of: decoding it costs a fraction of JSON's
// CPU, which at 150,000 pods is most of the observer's start-up work. A
// protobuf client still accepts JSON, as a server without protobuf sends.
func restClient(base *rest.Config, apiPath string, gv schema.GroupVersion, codecs serializer.CodecFactory, contentType string) (*rest.RESTClient, error) {
	c := rest.CopyConfig(base)
	c.APIPath, c.GroupVersion = apiPath, &gv
	c.NegotiatedSerializer = codecs.WithoutConversion()
	c.ContentType = contentType
	c.AcceptContentTypes = contentType
	if contentType != runtime.ContentTypeJSON {
		c.AcceptContentTypes += "," + runtime.ContentTypeJSON
	}
	return rest.RESTClientFor(c)
}

// Raw is a client for non-resource paths such as /version and /readyz.
func (c *Client) Raw() rest.Interface { return c.raw }

// Nodes are the cluster's nodes.
func (c *Client) Nodes() Resource[*Node, *NodeList] {
	return newResource(c.protobuf, "nodes", "", &Node{}, &NodeList{})
}

// Pods in namespace; "" is every namespace.
func (c *Client) Pods(namespace string) Resource[*Pod, *PodList] {
	return newResource(c.core, "pods", namespace, &Pod{}, &PodList{})
}

// PodPhases are the pods in namespace ("" is every namespace), decoded to
// name, namespace, resource version and phase only, in protobuf or in the
// JSON a server without protobuf sends.
func (c *Client) PodPhases(namespace string) Resource[*PodPhase, *PodPhaseList] {
	return newResource(c.podPhases, "pods", namespace, &PodPhase{}, &PodPhaseList{})
}

// Events in namespace; "" is every namespace.
func (c *Client) Events(namespace string) Resource[*Event, *EventList] {
	return newResource(c.protobuf, "events", namespace, &Event{}, &EventList{})
}

// ConfigMaps in namespace.
func (c *Client) ConfigMaps(namespace string) Resource[*ConfigMap, *ConfigMapList] {
	return newResource(c.core, "configmaps", namespace, &ConfigMap{}, &ConfigMapList{})
}

// Secrets in namespace.
func (c *Client) Secrets(namespace string) Resource[*Secret, *SecretList] {
	return newResource(c.core, "secrets", namespace, &Secret{}, &SecretList{})
}

// Leases in namespace.
func (c *Client) Leases(namespace string) Resource[*Lease, *LeaseList] {
	return newResource(c.coordination, "leases", namespace, &Lease{}, &LeaseList{})
}

// CertificateSigningRequests are cluster-scoped.
func (c *Client) CertificateSigningRequests() Resource[*CertificateSigningRequest, *CertificateSigningRequestList] {
	return newResource(c.certificates, "certificatesigningrequests", "",
		&CertificateSigningRequest{}, &CertificateSigningRequestList{})
}

// +k8s:deepcopy-gen=false

// Resource reads one kind of object. Its methods have the signatures of
// client-go's typed clients, so unit tests can serve a fake clientset
// through kubeapitest in its place.
type Resource[T, L runtime.Object] struct {
	client    rest.Interface
	name      string // plural resource name
	namespace string
	// Templates deep-copied per call: the type parameters are pointer
	// types, which generic code cannot allocate by itself.
	item T
	list L
}

func newResource[T, L runtime.Object](client rest.Interface, name, namespace string, item T, list L) Resource[T, L] {
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

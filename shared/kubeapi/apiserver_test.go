package kubeapi

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/watch"
)

// apiserverCodec encodes core/v1 objects as the apiserver sends them in
// protobuf: each in its envelope, and a watch stream as length-delimited
// bare WatchEvents around such objects; and in JSON.
type apiserverCodec struct {
	t              *testing.T
	scheme         *runtime.Scheme
	enc, raw, json runtime.Encoder
}

func newAPIServerCodec(t *testing.T) apiserverCodec {
	t.Helper()
	full := runtime.NewScheme()
	if err := corev1.AddToScheme(full); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(full, corev1.SchemeGroupVersion)
	return apiserverCodec{t: t, scheme: full,
		enc: protobuf.NewSerializer(full, full), raw: protobuf.NewRawSerializer(full, full),
		json: json.NewSerializerWithOptions(json.DefaultMetaFactory, full, full, json.SerializerOptions{})}
}

// object encodes obj in protobuf with its kind set, as the apiserver writes it.
func (c apiserverCodec) object(obj runtime.Object) []byte {
	c.t.Helper()
	return c.encode(c.enc, obj)
}

// jsonObject encodes obj in JSON with its kind set, as the apiserver writes it.
func (c apiserverCodec) jsonObject(obj runtime.Object) []byte {
	c.t.Helper()
	return c.encode(c.json, obj)
}

func (c apiserverCodec) encode(enc runtime.Encoder, obj runtime.Object) []byte {
	c.t.Helper()
	obj = obj.DeepCopyObject()
	kinds, _, err := c.scheme.ObjectKinds(obj)
	if err != nil {
		c.t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(kinds[0])
	b, err := runtime.Encode(enc, obj)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// stream frames events as a protobuf watch response body.
func (c apiserverCodec) stream(events ...watch.Event) []byte {
	c.t.Helper()
	var body bytes.Buffer
	frames := protobuf.LengthDelimitedFramer.NewFrameWriter(&body)
	for _, e := range events {
		frame, err := runtime.Encode(c.raw, &metav1.WatchEvent{Type: string(e.Type),
			Object: runtime.RawExtension{Raw: c.object(e.Object)}})
		if err != nil {
			c.t.Fatal(err)
		}
		if _, err := frames.Write(frame); err != nil {
			c.t.Fatal(err)
		}
	}
	return body.Bytes()
}

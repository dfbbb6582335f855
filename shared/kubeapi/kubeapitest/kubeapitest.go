// Package kubeapitest serves client-go's fake typed clients as kubeapi's
// kinds, for unit tests that build their cluster with a fake clientset and
// k8s.io/api objects. Every object is converted as the agent's clients would
// receive it: encoded by k8s.io/api's generated code, then decoded by
// kubeapi's own decoder (protobuf where the kind has one, JSON otherwise), so
// these tests exercise the decoders too.
package kubeapitest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"kubehz.dev/agent/shared/kubeapi"
)

// Convert decodes in, a k8s.io/api object, into a new T: from protobuf for
// the kinds the agent's clients read in protobuf, from JSON for the others.
func Convert[T runtime.Object](in runtime.Object) (T, error) {
	out := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	switch target := any(out).(type) {
	case *kubeapi.Node, *kubeapi.NodeList, *kubeapi.Event, *kubeapi.EventList, *kubeapi.PodPhase, *kubeapi.PodPhaseList:
		m, ok := in.(interface{ Marshal() ([]byte, error) })
		if !ok {
			return out, fmt.Errorf("%T has no protobuf encoding", in)
		}
		b, err := m.Marshal()
		if err != nil {
			return out, err
		}
		return out, target.(interface{ Unmarshal([]byte) error }).Unmarshal(b)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, out)
}

// MustConvert is Convert for objects a test built itself.
func MustConvert[T runtime.Object](in runtime.Object) T {
	out, err := Convert[T](in)
	if err != nil {
		panic(fmt.Sprintf("convert %T to %T: %v", in, out, err))
	}
	return out
}

// Typed is a fake typed client's list and watch.
type Typed[In runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (In, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// Reader serves src's lists as L and its watch events' objects as T (a
// Status in an ERROR event passes as it is).
func Reader[T, L runtime.Object, In runtime.Object](src Typed[In]) kubeapi.Reader[L] {
	return reader[T, L, In]{src}
}

type reader[T, L runtime.Object, In runtime.Object] struct{ src Typed[In] }

func (r reader[T, L, In]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	list, err := r.src.List(ctx, opts)
	if err != nil {
		var none L
		return none, err
	}
	return Convert[L](list)
}

func (r reader[T, L, In]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.src.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
		if _, status := e.Object.(*metav1.Status); status || e.Object == nil {
			return e, true
		}
		obj, err := Convert[T](e.Object)
		if err != nil {
			// Fails the informer's watch, and so the test, not the binary.
			return watch.Event{Type: watch.Error, Object: &metav1.Status{Status: metav1.StatusFailure, Message: err.Error()}}, true
		}
		e.Object = obj
		return e, true
	}), nil
}

// IsWatchListSemanticsUnSupported tells client-go that a fake client cannot
// stream its initial list, so informers on it list first.
func (reader[T, L, In]) IsWatchListSemanticsUnSupported() bool { return true }

// Getter serves src's Get as T.
func Getter[T, In runtime.Object](src interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (In, error)
}) kubeapi.Getter[T] {
	return getter[T, In]{src.Get}
}

type getter[T, In runtime.Object] struct {
	get func(ctx context.Context, name string, opts metav1.GetOptions) (In, error)
}

func (g getter[T, In]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	obj, err := g.get(ctx, name, opts)
	if err != nil {
		var none T
		return none, err
	}
	return Convert[T](obj)
}

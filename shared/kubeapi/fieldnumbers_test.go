package kubeapi

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFieldNumbers_MatchTheAPITypesProtobufTags pins every field number and
// wire type the protobuf decoders read to the protobuf struct tag of the
// k8s.io/api (or apimachinery) field it stands for, as the module's version
// of those types declares it. A number read but not pinned here fails too.
func TestFieldNumbers_MatchTheAPITypesProtobufTags(t *testing.T) {
	objectMeta := map[protowire.Number]string{
		metaName: "Name", metaNamespace: "Namespace", metaResourceVersion: "ResourceVersion",
		metaCreationTimestamp: "CreationTimestamp", metaLabels: "Labels", metaAnnotations: "Annotations",
	}
	list := map[protowire.Number]string{listMetadata: "ListMeta", listItems: "Items"}
	messages := []struct {
		name string
		read []field // readString and readMessage read one length-delimited field
		api  reflect.Type
		pins map[protowire.Number]string // the Go field of api each number stands for
	}{
		{"Node", objectFields, reflect.TypeFor[corev1.Node](), map[protowire.Number]string{objectMetadata: "ObjectMeta", objectStatus: "Status"}},
		{"Node metadata", nodeMetaFields, reflect.TypeFor[metav1.ObjectMeta](), objectMeta},
		{"NodeStatus", nodeStatusFields, reflect.TypeFor[corev1.NodeStatus](), map[protowire.Number]string{
			nodeStatusCapacity: "Capacity", nodeStatusConditions: "Conditions", nodeStatusNodeInfo: "NodeInfo"}},
		{"NodeCondition", conditionFields, reflect.TypeFor[corev1.NodeCondition](), map[protowire.Number]string{
			nodeConditionType: "Type", nodeConditionStatus: "Status"}},
		{"NodeSystemInfo", []field{{nodeInfoKubeletVersion, lenType}}, reflect.TypeFor[corev1.NodeSystemInfo](), map[protowire.Number]string{
			nodeInfoKubeletVersion: "KubeletVersion"}},
		{"NodeList", listFields, reflect.TypeFor[corev1.NodeList](), list},

		{"Event", eventFields, reflect.TypeFor[corev1.Event](), map[protowire.Number]string{
			objectMetadata: "ObjectMeta", eventInvolvedObject: "InvolvedObject", eventReason: "Reason", eventMessage: "Message",
			eventLastTimestamp: "LastTimestamp", eventCount: "Count", eventType: "Type", eventEventTime: "EventTime", eventSeries: "Series"}},
		{"Event metadata", eventMetaFields, reflect.TypeFor[metav1.ObjectMeta](), objectMeta},
		{"ObjectReference", referenceFields, reflect.TypeFor[corev1.ObjectReference](), map[protowire.Number]string{
			referenceKind: "Kind", referenceNamespace: "Namespace", referenceName: "Name"}},
		{"EventSeries", []field{{seriesLastObservedTime, lenType}}, reflect.TypeFor[corev1.EventSeries](), map[protowire.Number]string{
			seriesLastObservedTime: "LastObservedTime"}},
		{"EventList", listFields, reflect.TypeFor[corev1.EventList](), list},

		{"Pod", objectFields, reflect.TypeFor[corev1.Pod](), map[protowire.Number]string{objectMetadata: "ObjectMeta", objectStatus: "Status"}},
		{"Pod metadata", keyFields, reflect.TypeFor[metav1.ObjectMeta](), objectMeta},
		{"PodStatus", []field{{podStatusPhase, lenType}}, reflect.TypeFor[corev1.PodStatus](), map[protowire.Number]string{podStatusPhase: "Phase"}},
		{"PodList", listFields, reflect.TypeFor[corev1.PodList](), list},
	}
	for _, m := range messages {
		t.Run(m.name, func(t *testing.T) {
			for _, f := range m.read {
				name, ok := m.pins[f.num]
				if !ok {
					t.Errorf("reads field %d, which this test does not pin to a field of %s", f.num, m.api)
					continue
				}
				sf, ok := m.api.FieldByName(name)
				if !ok {
					t.Errorf("%s has no field %s", m.api, name)
					continue
				}
				num, typ := protobufTag(t, sf.Tag.Get("protobuf"))
				if num != f.num || typ != f.typ {
					t.Errorf("reads %s.%s as field %d, wire type %d; k8s.io/api says field %d, wire type %d",
						m.api.Name(), name, f.num, f.typ, num, typ)
				}
			}
		})
	}
}

// TestFieldNumbers_MapEntriesMatchTheGeneratedEncoding pins the key and
// value numbers of the map entries the decoders read. Struct tags do not
// carry them (protobuf numbers every map entry's key 1 and value 2), so
// this reads them from what k8s.io/api's generated encoder writes.
func TestFieldNumbers_MapEntriesMatchTheGeneratedEncoding(t *testing.T) {
	maps := []struct {
		name    string
		message interface{ Marshal() ([]byte, error) }
		field   protowire.Number // of the map in message
		value   string           // the one value's bytes (a Quantity is a message: its string in field 1)
	}{
		{"labels", &metav1.ObjectMeta{Labels: map[string]string{"k": "v"}}, metaLabels, "v"},
		{"annotations", &metav1.ObjectMeta{Annotations: map[string]string{"k": "v"}}, metaAnnotations, "v"},
		{"capacity", &corev1.NodeStatus{Capacity: corev1.ResourceList{"k": resource.MustParse("4")}}, nodeStatusCapacity, "\n\x014"},
	}
	for _, m := range maps {
		t.Run(m.name, func(t *testing.T) {
			data, err := m.message.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var entries []encoded
			for _, f := range fieldsOf(t, data) {
				if f.num == m.field {
					entries = append(entries, f)
				}
			}
			if len(entries) != 1 || entries[0].typ != protowire.BytesType {
				t.Fatalf("encoded as %v in field %d, want one length-delimited entry", entries, m.field)
			}
			got := fieldsOf(t, entries[0].value)
			want := []encoded{{mapEntryKey, mapEntry[0].typ, []byte("k")}, {mapEntryValue, mapEntry[1].typ, []byte(m.value)}}
			if len(mapEntry) != 2 || mapEntry[0].num != mapEntryKey || mapEntry[1].num != mapEntryValue || !reflect.DeepEqual(got, want) {
				t.Fatalf("the entry encodes as %v; the decoders read %v", got, want)
			}
		})
	}
}

type encoded struct {
	num   protowire.Number
	typ   protowire.Type
	value []byte // a length-delimited field's payload, or any other's bytes
}

// fieldsOf lists the fields of a message in order.
func fieldsOf(t *testing.T, b []byte) []encoded {
	t.Helper()
	var out []encoded
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("malformed: %x", b)
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatalf("malformed: %x", b)
		}
		v := b[:m]
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(v)
		}
		out = append(out, encoded{num, typ, v})
		b = b[m:]
	}
	return out
}

// protobufTag reads the field number and wire type of a struct tag such as
// "bytes,3,opt,name=status".
func protobufTag(t *testing.T, tag string) (protowire.Number, protowire.Type) {
	t.Helper()
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		t.Fatalf("protobuf tag %q has no field number", tag)
	}
	num, err := strconv.Atoi(parts[1])
	if err != nil {
		t.Fatalf("protobuf tag %q: %v", tag, err)
	}
	wire := map[string]protowire.Type{
		"bytes": protowire.BytesType, "varint": protowire.VarintType, "zigzag32": protowire.VarintType,
		"zigzag64": protowire.VarintType, "fixed32": protowire.Fixed32Type, "fixed64": protowire.Fixed64Type,
	}
	typ, ok := wire[parts[0]]
	if !ok {
		t.Fatalf("protobuf tag %q: unknown wire type %q", tag, parts[0])
	}
	return protowire.Number(num), typ
}

package kubeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The protobuf decoders of this package read a few fields of objects the
// apiserver sends whole, and step over the rest without allocating. Field
// numbers are those of k8s.io/api's and k8s.io/apimachinery's
// generated.proto.

// field is one field a decoder reads, with the wire type it must arrive in.
type field struct {
	num protowire.Number
	typ protowire.Type
}

const (
	lenType    = protowire.BytesType  // strings, bytes, messages, map entries
	varintType = protowire.VarintType // int32, int64, bool
)

// Fields every kind's decoder shares.
const (
	listMetadata, listItems    = 1, 2
	objectMetadata             = 1
	objectStatus               = 3 // in every core/v1 kind with a status
	mapEntryKey, mapEntryValue = 1, 2

	metaName, metaNamespace = 1, 3
	metaResourceVersion     = 6
	metaCreationTimestamp   = 8
	metaLabels              = 11
	metaAnnotations         = 12

	initialEventsAnnotationsPrefix = "k8s.io/initial-events-"
)

var (
	listFields   = []field{{listMetadata, lenType}, {listItems, lenType}}
	objectFields = []field{{objectMetadata, lenType}, {objectStatus, lenType}}
	mapEntry     = []field{{mapEntryKey, lenType}, {mapEntryValue, lenType}}

	// keyFields is what an informer reads of any object's metadata: its key,
	// its resource version and the annotations the apiserver sets on a
	// watch-list bookmark (the reflector reads "k8s.io/initial-events-end" to
	// know the initial list has ended). The object's own annotations are
	// skipped, as are its labels unless a kind asks for them.
	keyFields = []field{{metaName, lenType}, {metaNamespace, lenType}, {metaResourceVersion, lenType}, {metaAnnotations, lenType}}
)

// maxName is the longest name the apiserver accepts for any kind but one (a
// DNS subdomain). A core/v1 Event's name is never validated: anyone who may
// create Events may give one a name the size of the object, which its record
// and its cache key would each keep whole.
const maxName = 253

// objectName is the name to keep: n, or past maxName bytes its SHA-256, as
// "sha256-" and 64 hex digits. The digest keeps distinct names apart and is
// the same on every read, so a watch's delete finds what its add stored.
func objectName[T string | []byte](n T) string {
	if len(n) <= maxName {
		return string(n)
	}
	sum := sha256.Sum256([]byte(n))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// eachField calls fn, in order, with the number and value of every field of
// the message b that read names, and steps over the others. The value is the
// payload of a length-delimited field, or the bytes of a varint (read them
// with protowire.ConsumeVarint). A read field in another wire type, or a
// truncated or malformed message, is an error, as it is for the generated
// decoders.
func eachField(b []byte, message string, read []field, fn func(protowire.Number, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("decode %s: %w", message, protowire.ParseError(n))
		}
		b = b[n:]
		i := slices.IndexFunc(read, func(f field) bool { return f.num == num })
		if i >= 0 && typ != read[i].typ {
			return fmt.Errorf("decode %s field %d: wire type %d, want %d", message, num, typ, read[i].typ)
		}
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			_, n = protowire.ConsumeVarint(b)
			if n >= 0 {
				v = b[:n]
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("decode %s field %d: %w", message, num, protowire.ParseError(n))
		}
		b = b[n:]
		if i >= 0 {
			if err := fn(num, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// readMessage calls unmarshal with every value of the length-delimited
// field num of the message b, the one field of it a decoder reads. A
// repeated message is read again at each occurrence, as the generated
// decoders read it.
func readMessage(b []byte, message string, num protowire.Number, unmarshal func([]byte) error) error {
	return eachField(b, message, []field{{num, lenType}}, func(_ protowire.Number, v []byte) error {
		return unmarshal(v)
	})
}

// readString reads the string field num of the message b, the one field of
// it a decoder reads, into dst; of a repeated field the last value stays.
func readString(b []byte, message string, num protowire.Number, dst *string) error {
	return readMessage(b, message, num, func(v []byte) error {
		*dst = string(v)
		return nil
	})
}

// readStrings reads the string fields read names of the message b, the
// value of read[i] into dst[i]; of a repeated field the last value stays.
func readStrings(b []byte, message string, read []field, dst ...*string) error {
	return eachField(b, message, read, func(num protowire.Number, v []byte) error {
		*dst[slices.IndexFunc(read, func(f field) bool { return f.num == num })] = string(v)
		return nil
	})
}

// varint reads a value eachField handed over as a varint.
func varint(v []byte) uint64 {
	x, _ := protowire.ConsumeVarint(v)
	return x
}

// unmarshalObject reads the message b of a kind whose decoder reads its
// metadata and its status: the metadata fields meta names into m, and the
// status's payload through status.
func unmarshalObject(b []byte, kind string, m *metav1.ObjectMeta, meta []field, status func([]byte) error) error {
	return eachField(b, kind, objectFields, func(num protowire.Number, v []byte) error {
		switch num {
		case objectMetadata:
			return unmarshalMeta(m, v, meta)
		case objectStatus:
			return status(v)
		}
		return nil
	})
}

// unmarshalMeta reads the metadata fields read names (a superset of
// keyFields), keeping only the watch-list annotations.
func unmarshalMeta(m *metav1.ObjectMeta, b []byte, read []field) error {
	return eachField(b, "ObjectMeta", read, func(num protowire.Number, v []byte) error {
		switch num {
		case metaName:
			m.Name = objectName(v)
		case metaNamespace:
			m.Namespace = string(v)
		case metaResourceVersion:
			m.ResourceVersion = string(v)
		case metaCreationTimestamp:
			return m.CreationTimestamp.Unmarshal(v)
		case metaLabels:
			key, value, err := unmarshalMapEntry(v, "label")
			if err != nil {
				return err
			}
			if m.Labels == nil {
				m.Labels = map[string]string{}
			}
			m.Labels[string(key)] = string(value)
		case metaAnnotations:
			return unmarshalAnnotation(m, v)
		}
		return nil
	})
}

func unmarshalAnnotation(m *metav1.ObjectMeta, b []byte) error {
	key, value, err := unmarshalMapEntry(b, "annotation")
	// Compared as a string conversion, which does not allocate.
	prefix := len(initialEventsAnnotationsPrefix)
	if err != nil || len(key) < prefix || string(key[:prefix]) != initialEventsAnnotationsPrefix {
		return err
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[string(key)] = string(value)
	return nil
}

// unmarshalMapEntry reads one entry of a map<string, T>; value is the
// payload of T.
func unmarshalMapEntry(b []byte, what string) (key, value []byte, err error) {
	err = eachField(b, what, mapEntry, func(num protowire.Number, v []byte) error {
		switch num {
		case mapEntryKey:
			key = v
		case mapEntryValue:
			value = v
		}
		return nil
	})
	return key, value, err
}

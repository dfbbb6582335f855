package desired

import (
	"errors"
	"fmt"

	k8sjson "sigs.k8s.io/json"
)

// encoding/json matches object keys case-insensitively and lets a repeated
// key's last value win, so {"execution":{"Scaling":true}} would authorize
// scaling and {"scaling":false,"scaling":true} would read as true. The
// document authorizes writes to the user's cluster, so it is read with
// sigs.k8s.io/json, the decoder the apiserver reads objects with: exact keys
// only (a differently cased key is an unknown key, ignored), and a document
// that repeats a key anywhere is rejected whole.

// decodeExact decodes b into v matching keys exactly. Unknown keys are
// ignored (a newer platform may add some); repeated ones are left to
// noDuplicateKeys.
func decodeExact(b []byte, v any) error {
	return k8sjson.UnmarshalCaseSensitivePreserveInts(b, v)
}

// errDuplicateKey is wrapped with where the key is; no value is quoted.
var errDuplicateKey = errors.New("an object repeats a key")

// noDuplicateKeys fails on the first key given twice in one object, at any
// depth. It decodes into a generic tree, not into Document: the library
// checks repeats only for the keys it stores, so decoding into the struct
// would let {"future":{"k":1,"k":2}}, or an unknown key given twice at the
// top, through unnoticed. b must be valid JSON.
func noDuplicateKeys(b []byte) error {
	var tree any
	strict, err := k8sjson.UnmarshalStrict(b, &tree, k8sjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strict) == 0 {
		return nil
	}
	var fe k8sjson.FieldError
	if errors.As(strict[0], &fe) {
		return fmt.Errorf("%w: %q", errDuplicateKey, clip(fe.FieldPath()))
	}
	return errDuplicateKey
}

// clip keeps an error line short whatever key a hostile document sends.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

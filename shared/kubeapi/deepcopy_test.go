package kubeapi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const generatedFile = "zz_generated.deepcopy.go"

// TestDeepCopy_GeneratedFileIsCurrent runs doc.go's go:generate command on a
// copy of the package and compares what it writes with the committed file,
// so a kind changed without running go generate fails here rather than
// copying stale fields. The copy keeps the source tree untouched while other
// builds read it. The generator is fetched through the Go module proxy the
// first time on a machine, and built the first time on a build cache.
func TestDeepCopy_GeneratedFileIsCurrent(t *testing.T) {
	// No skip, not even under -short: a stale file is a wrong deep copy.
	// It builds deepcopy-gen: about 40 s on 2 cores with a cold build cache.
	args := generateCommand(t)
	pinned := args[2][strings.LastIndex(args[2], "@")+1:]
	if want := moduleVersion(t, "k8s.io/apimachinery"); pinned != want {
		t.Fatalf("doc.go runs deepcopy-gen %s; the module requires k8s.io/apimachinery %s: pin the same release", pinned, want)
	}

	module := t.TempDir()
	pkg := filepath.Join(module, "kubeapi")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../go.mod", "../go.sum"} {
		copyFile(t, f, filepath.Join(module, filepath.Base(f)))
	}
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range sources {
		if !strings.HasSuffix(f, "_test.go") && f != generatedFile {
			copyFile(t, f, filepath.Join(pkg, f))
		}
	}

	cmd := exec.CommandContext(t.Context(), args[0], args[1:]...)
	cmd.Dir = pkg
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	got, err := os.ReadFile(filepath.Join(pkg, generatedFile))
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile(generatedFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, have) {
		t.Fatalf("%s is stale: run go generate in shared/kubeapi", generatedFile)
	}
}

// generateCommand is the one go:generate command in doc.go, split into words.
func generateCommand(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var found [][]string
	for line := range strings.Lines(string(doc)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			found = append(found, strings.Fields(rest))
		}
	}
	if len(found) != 1 || len(found[0]) < 3 || found[0][0] != "go" || found[0][1] != "run" ||
		!strings.HasPrefix(found[0][2], "k8s.io/code-generator/cmd/deepcopy-gen@") {
		t.Fatalf("doc.go should hold one go:generate line that runs a pinned deepcopy-gen, found %q", found)
	}
	return found[0]
}

// moduleVersion is the version of module the shared module requires.
func moduleVersion(t *testing.T, module string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	return strings.TrimSpace(string(out))
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestKinds_DeepCopiesShareNothing(t *testing.T) {
	holder, seconds, renew, immutable := "actor-1", int32(15), metav1.NewMicroTime(t0), true
	meta := metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"}}
	node := asNode(fullNode("wrk-a", map[string]string{"a": "b"}, map[string]string{"k8s.io/initial-events-end": "true"}))
	event := asEvent(fullEvent("e", 2, true))
	objs := []runtime.Object{
		&node, &NodeList{ListMeta: metav1.ListMeta{RemainingItemCount: new(int64(1))}, Items: []Node{node}},
		&event, &EventList{Items: []Event{event}},
		&Pod{ObjectMeta: meta, Status: PodStatus{Phase: "Running", Conditions: []Condition{{Type: "Ready", Status: "True"}}}},
		&PodList{Items: []Pod{{ObjectMeta: meta}}},
		&PodPhase{ObjectMeta: meta, Status: PodPhaseStatus{Phase: "Running"}}, &PodPhaseList{Items: []PodPhase{{ObjectMeta: meta}}},
		&ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}}, &ConfigMapList{Items: []ConfigMap{{ObjectMeta: meta}}},
		&Secret{ObjectMeta: meta, Immutable: &immutable, Type: SecretTypeOpaque, Data: map[string][]byte{"k": []byte("v")}},
		&SecretList{Items: []Secret{{ObjectMeta: meta}}},
		&Lease{ObjectMeta: meta, Spec: LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renew}},
		&LeaseList{Items: []Lease{{ObjectMeta: meta}}},
		&CertificateSigningRequest{ObjectMeta: meta, Status: CSRStatus{Certificate: []byte("c"), Conditions: []Condition{{Type: "Approved"}}}},
		&CertificateSigningRequestList{Items: []CertificateSigningRequest{{ObjectMeta: meta}}},
	}
	for _, obj := range objs {
		// Each kind's own, not one promoted from the embedded metadata.
		kind := reflect.TypeOf(obj)
		if m, ok := kind.MethodByName("DeepCopyInto"); !ok || m.Type.In(1) != kind {
			t.Errorf("%T: DeepCopyInto is not the kind's own", obj)
		}
		if m, ok := kind.MethodByName("DeepCopy"); !ok || m.Type.Out(0) != kind {
			t.Errorf("%T: DeepCopy is not the kind's own", obj)
		}
		out := obj.DeepCopyObject()
		if !reflect.DeepEqual(out, obj) {
			t.Errorf("%T: copy %#v differs from %#v", obj, out, obj)
		}
		if path := aliased(reflect.ValueOf(obj), reflect.ValueOf(out), reflect.TypeOf(obj).Elem().Name()); path != "" {
			t.Errorf("%T: the copy shares %s with the original", obj, path)
		}
	}
}

// aliased names the first pointer, map or slice that a and b share, or is
// "". Unexported fields (a time's location, a quantity's cache) are the
// API types' own business.
func aliased(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return aliased(a.Elem(), b.Elem(), path)
	case reflect.Map:
		if a.Len() == 0 {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for _, k := range a.MapKeys() {
			if p := aliased(a.MapIndex(k), b.MapIndex(k), path+"["+k.String()+"]"); p != "" {
				return p
			}
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for i := range a.Len() {
			if p := aliased(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				if p := aliased(a.Field(i), b.Field(i), path+"."+f.Name); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

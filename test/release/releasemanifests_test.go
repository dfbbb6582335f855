package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/releasemanifests"
)

var (
	observerDigest = "sha256:" + strings.Repeat("0a", 32)
	actorDigest    = "sha256:" + strings.Repeat("b1", 32)
)

func releaseOptions(root, version string) releasemanifests.Options {
	return releasemanifests.Options{
		Root:    root,
		Version: version,
		Digests: map[string]string{"observer": observerDigest, "actor": actorDigest},
	}
}

// TestReleaseManifests_PinEveryImageAndLabelEveryObject renders both tiers
// from deploy/ with made-up digests: every image line names ghcr.io/kubehz
// by the digest of the right image, every object and pod template carries
// the released version, nothing is lost against a plain kustomize render,
// and SHA256SUMS matches the files written.
func TestReleaseManifests_PinEveryImageAndLabelEveryObject(t *testing.T) {
	const version = "v1.4.0-rc.2"
	dir := t.TempDir()
	files, err := releasemanifests.Write(releaseOptions(root(t), version), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"install-actor.yaml", "install-observer.yaml", "install-register.yaml", "SHA256SUMS"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v", files, want)
	}
	pinned := regexp.MustCompile(`^ghcr\.io/kubehz/(observer|actor)@(sha256:[0-9a-f]{64})$`)
	digests := map[string]string{"observer": observerDigest, "actor": actorDigest}
	// The register tier runs the observer image.
	for file, tier := range map[string]string{"install-observer.yaml": "observer", "install-actor.yaml": "actor", "install-register.yaml": "register"} {
		image := tier
		if tier == "register" {
			image = "observer"
		}
		t.Run(tier, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			// Every image line, whatever object holds it.
			seen := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^\s*-?\s*image:\s*(\S+)\s*$`).FindAllStringSubmatch(string(raw), -1) {
				p := pinned.FindStringSubmatch(m[1])
				if p == nil || p[2] != digests[p[1]] {
					t.Errorf("image %s is not pinned to the released digest", m[1])
					continue
				}
				seen[p[1]] = true
			}
			if !seen[image] {
				t.Errorf("no %s image in %s", image, file)
			}
			objs := decodeAll(t, raw)
			plain, err := kube.Render(filepath.Join(root(t), "deploy", tier))
			if err != nil {
				t.Fatal(err)
			}
			// What the release leaves out on purpose: the shared Namespace
			// (a `kubectl delete -f` would take lok8s's objects with it)
			// and the ConfigMaps of the user's settings (an upgrade would
			// blank them). Everything else is kept.
			left := 0
			for _, o := range plain {
				if o.GetKind() == "Namespace" || (o.GetKind() == "ConfigMap" && (strings.HasPrefix(o.GetName(), "kubehz-config-") || strings.HasPrefix(o.GetName(), "kubehz-actor-config-"))) {
					left++
				}
			}
			if left < 2 || len(objs) != len(plain)-left {
				t.Errorf("%d objects, kustomize renders %d of which the release leaves out %d", len(objs), len(plain), left)
			}
			for _, o := range objs {
				if o.GetKind() == "Namespace" || (o.GetKind() == "ConfigMap" && strings.Contains(o.GetName(), "config")) {
					t.Errorf("the release file ships %s %s, which the user owns", o.GetKind(), o.GetName())
				}
			}
			if strings.Contains(string(raw), "kubehz-config-") || strings.Contains(string(raw), "CLUSTER_ID") {
				t.Errorf("%s still names a generated settings ConfigMap or carries CLUSTER_ID", file)
			}
			if !strings.Contains(string(raw), "name: kubehz-config\n") {
				t.Errorf("%s does not refer to the user's ConfigMap kubehz-config", file)
			}
			for _, o := range objs {
				ref := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
				if got := o.GetLabels()[releasemanifests.VersionLabel]; got != version {
					t.Errorf("%s: version label %q", ref, got)
				}
				for _, path := range [][]string{{"spec", "template"}, {"spec", "jobTemplate"}, {"spec", "jobTemplate", "spec", "template"}} {
					if _, ok, _ := unstructured.NestedMap(o.Object, path...); !ok {
						continue
					}
					labels, _, _ := unstructured.NestedStringMap(o.Object, append(path, "metadata", "labels")...)
					if labels[releasemanifests.VersionLabel] != version {
						t.Errorf("%s: %s has version label %q", ref, strings.Join(path, "."), labels[releasemanifests.VersionLabel])
					}
				}
			}
		})
	}
	checkSums(t, dir)
}

// checkSums reads SHA256SUMS as sha256sum -c would and checks that it names
// exactly the manifests, each with its hash.
func checkSums(t *testing.T, dir string) {
	t.Helper()
	sums, err := os.ReadFile(filepath.Join(dir, releasemanifests.SumsFile))
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Errorf("SHA256SUMS line %q is not \"<hex>  <file>\"", sc.Text())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("SHA256SUMS names %s: %v", name, err)
			continue
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != sum {
			t.Errorf("%s hashes to %s, SHA256SUMS says %s", name, got, sum)
		}
		listed++
	}
	if listed != len(releasemanifests.Tiers) {
		t.Errorf("SHA256SUMS lists %d files, want %d", listed, len(releasemanifests.Tiers))
	}
}

func decodeAll(t *testing.T, raw []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatal(err)
		}
		if m != nil {
			out = append(out, &unstructured.Unstructured{Object: m})
		}
	}
}

// TestReleaseManifests_LabelAndPinWhateverDeployHolds renders a tier that
// deploy/ does not ship today, objects without any label and workloads of
// every kind that holds a pod template, so the renderer does not depend on
// what deploy/ happens to contain; an image not of ours is refused.
func TestReleaseManifests_LabelAndPinWhateverDeployHolds(t *testing.T) {
	r := t.TempDir()
	tier := filepath.Join(r, "deploy", "observer")
	if err := os.MkdirAll(tier, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tier, "kustomization.yaml"), "resources: [objects.yaml]\n")
	write(t, filepath.Join(tier, "objects.yaml"), `apiVersion: v1
kind: ConfigMap
metadata: {name: bare, namespace: x}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: register, namespace: x}
spec:
  schedule: "@hourly"
  jobTemplate:
    spec:
      template:
        spec:
          initContainers: [{name: init, image: "kubehz/observer"}]
          containers: [{name: c, image: "registry.example/kubehz/actor:v0.1.0@sha256:`+strings.Repeat("9", 64)+`"}]
`)
	raw, err := releasemanifests.Render(releaseOptions(r, "v2.0.0"), "observer")
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, raw)
	if len(objs) != 2 {
		t.Fatalf("%d objects, want 2", len(objs))
	}
	for _, o := range objs {
		if o.GetLabels()[releasemanifests.VersionLabel] != "v2.0.0" {
			t.Errorf("%s has no version label", o.GetName())
		}
	}
	var cron map[string]any
	for _, o := range objs {
		if o.GetKind() == "CronJob" {
			cron = o.Object
		}
	}
	for _, path := range [][]string{{"spec", "jobTemplate", "metadata", "labels"}, {"spec", "jobTemplate", "spec", "template", "metadata", "labels"}} {
		if l, _, _ := unstructured.NestedStringMap(cron, path...); l[releasemanifests.VersionLabel] != "v2.0.0" {
			t.Errorf("%s has no version label", strings.Join(path, "."))
		}
	}
	for _, want := range []string{"image: ghcr.io/kubehz/observer@" + observerDigest, "image: ghcr.io/kubehz/actor@" + actorDigest} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("want %q in:\n%s", want, raw)
		}
	}

	write(t, filepath.Join(tier, "objects.yaml"), `apiVersion: apps/v1
kind: Deployment
metadata: {name: sidecar, namespace: x}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: proxy, image: "busybox:1"}]
`)
	if _, err := releasemanifests.Render(releaseOptions(r, "v2.0.0"), "observer"); err == nil || !strings.Contains(err.Error(), `"busybox:1"`) {
		t.Errorf("a foreign image must be refused by name, got %v", err)
	}
}

// TestReleaseManifests_RefuseWhatWouldPublishAMutableOrMadeUpRelease gives
// the renderer a missing or malformed digest and versions that are not
// release tags: each is refused, naming what is wrong, and nothing is
// written.
func TestReleaseManifests_RefuseWhatWouldPublishAMutableOrMadeUpRelease(t *testing.T) {
	good := releaseOptions(root(t), "v1.2.3")
	for _, tc := range []struct {
		name    string
		version string
		digests map[string]string
		want    string
	}{
		{"no observer digest", "v1.2.3", map[string]string{"actor": actorDigest}, "no digest for the observer image"},
		{"empty actor digest", "v1.2.3", map[string]string{"observer": observerDigest, "actor": ""}, "no digest for the actor image"},
		{"digest without algorithm", "v1.2.3", map[string]string{"observer": strings.Repeat("a", 64), "actor": actorDigest}, "for the observer image is not sha256:"},
		{"short digest", "v1.2.3", map[string]string{"observer": observerDigest, "actor": "sha256:abc"}, "for the actor image is not sha256:"},
		{"uppercase digest", "v1.2.3", map[string]string{"observer": "sha256:" + strings.Repeat("A", 64), "actor": actorDigest}, "for the observer image is not sha256:"},
		{"a tag for a digest", "v1.2.3", map[string]string{"observer": "v1.2.3", "actor": actorDigest}, "for the observer image is not sha256:"},
		{"no version", "", good.Digests, `version "" is not a release tag`},
		{"no v", "1.2.3", good.Digests, `version "1.2.3" is not a release tag`},
		{"two parts", "v1.2", good.Digests, "is not a release tag"},
		{"leading zero", "v01.2.3", good.Digests, "is not a release tag"},
		{"a branch", "main", good.Digests, "is not a release tag"},
		{"the dev default", "dev", good.Digests, "is not a release tag"},
		{"build metadata", "v1.2.3+abc", good.Digests, "is not a release tag"},
		{"git describe past a tag", "v0.1.0-3-gabc1234", good.Digests, "git describe's name"},
		{"git describe past a tag, modified", "v0.1.0-3-gabc1234-dirty", good.Digests, "git describe's name"},
		{"git describe at a tag, modified", "v0.1.0-dirty", good.Digests, "git describe's name"},
		{"longer than a label value", "v1.2.3-" + strings.Repeat("a", 60), good.Digests, "cannot be a label value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			o := good
			o.Version, o.Digests = tc.version, tc.digests
			_, err := releasemanifests.Write(o, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a refused release wrote %s", dir)
			}
		})
	}
}

// Package releasemanifests renders the manifests a release publishes: each
// deploy/ tier built with kustomize, every image of ours pinned to the digest
// the release pushed, every object labelled with the released version, and a
// SHA256SUMS over the files. It refuses input that would publish a manifest
// pointing at a mutable tag or a made-up version.
//
// A release file is what `kubectl apply -f` installs, upgrades by re-applying
// and `kubectl delete -f` removes. So it holds nothing the user owns or
// shares: no Namespace (kubehz-system also holds lok8s's identity Secret,
// marker and CronJob, which a delete of the Namespace would take along) and
// no ConfigMap of settings (the user creates those once; a release that
// shipped them would blank them on every upgrade).
package releasemanifests

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"kubehz.dev/agent/test/kube"
)

// Registry is where the release workflow pushes the images.
const Registry = "ghcr.io/kubehz"

// VersionLabel is set on every object and pod template; deploy/ carries "dev".
const VersionLabel = "app.kubernetes.io/version"

// SumsFile is the checksum file written beside the manifests, in the format
// `sha256sum -c` reads.
const SumsFile = "SHA256SUMS"

// Tiers maps each published file to the deploy/ directory it is rendered from.
var Tiers = map[string]string{
	"install-observer.yaml": "observer",
	"install-actor.yaml":    "actor",
	// The observer with the one-shot registration Job, for clusters without
	// lok8s (it runs the observer image as `observer register`).
	"install-register.yaml": "register",
}

// UserConfigMaps are the ConfigMaps deploy/ generates from the .env files a
// user edits (config.env, actor.env). A release ships neither: its
// Deployments name them without kustomize's hash suffix, and the README's
// install creates them once.
var UserConfigMaps = []string{"kubehz-config", "kubehz-actor-config"}

// Options is what one release is rendered from.
type Options struct {
	Root    string // repository root, holding deploy/
	Version string // the release tag, e.g. v1.2.3
	// Digests maps an image name (observer, actor) to its pushed digest,
	// sha256:<64 hex>.
	Digests map[string]string
}

var (
	// A v-prefixed semantic version without build metadata: "+" is not
	// allowed in a label value.
	versionRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
	digestRE  = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	// describeRE finds what git describe adds to a tag: commits since it and
	// the abbreviated hash, or -dirty for uncommitted changes.
	describeRE = regexp.MustCompile(`-[0-9]+-g[0-9a-f]{4,}(-dirty)?$|-dirty$`)
)

// Validate refuses a version that is not a release tag and a missing or
// malformed digest for either image.
func (o Options) Validate() error {
	var errs []error
	if !versionRE.MatchString(o.Version) {
		errs = append(errs, fmt.Errorf("version %q is not a release tag like v1.2.3 or v1.2.3-rc.1", o.Version))
	} else if describeRE.MatchString(o.Version) {
		// The Makefile's default VERSION is git describe's, which reads as
		// semver past a tag: v1.2.3-4-gabc1234, or -dirty.
		errs = append(errs, fmt.Errorf("version %q is git describe's name of a checkout past or beside a tag, not a release tag: pass VERSION=vX.Y.Z", o.Version))
	} else if msgs := validation.IsValidLabelValue(o.Version); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("version %q cannot be a label value: %s", o.Version, strings.Join(msgs, "; ")))
	}
	for _, image := range []string{"observer", "actor"} {
		d, ok := o.Digests[image]
		switch {
		case !ok || d == "":
			errs = append(errs, fmt.Errorf("no digest for the %s image: pass the sha256:… digest the release pushed", image))
		case !digestRE.MatchString(d):
			errs = append(errs, fmt.Errorf("digest %q for the %s image is not sha256: and 64 lowercase hex digits", d, image))
		}
	}
	return errors.Join(errs...)
}

// Write renders every tier into dir and writes SHA256SUMS beside them. It
// returns the names of the files written.
func Write(o Options, dir string) ([]string, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(Tiers))
	for name := range Tiers {
		names = append(names, name)
	}
	slices.Sort(names)
	var sums strings.Builder
	for _, name := range names {
		b, err := Render(o, Tiers[name])
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), name)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return append(names, SumsFile), nil
}

// Render builds deploy/<tier> and returns it as one multi-document YAML file
// with images pinned and versions set.
func Render(o Options, tier string) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	objs, err := kube.Render(filepath.Join(o.Root, "deploy", tier))
	if err != nil {
		return nil, err
	}
	objs = leaveOutUsers(objs)
	var out strings.Builder
	fmt.Fprintf(&out, "# kubehz-agent %s, %s tier: kubectl apply --server-side -f install-%s.yaml\n", o.Version, tier, tier)
	fmt.Fprintf(&out, "# Create the namespace kubehz-system and the ConfigMap kubehz-config first (README \"Install\").\n")
	for _, obj := range objs {
		if err := pin(obj, o); err != nil {
			return nil, err
		}
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	return []byte(out.String()), nil
}

// leaveOutUsers drops the Namespace and the generated settings ConfigMaps
// and points every reference to a generated name (kubehz-config-<hash>) at
// the plain name the user's ConfigMap has.
func leaveOutUsers(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	plain := map[string]string{}
	var kept []*unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "Namespace" {
			continue
		}
		if name := userConfigMap(obj); name != "" {
			plain[obj.GetName()] = name
			continue
		}
		kept = append(kept, obj)
	}
	for _, obj := range kept {
		rename(obj.Object, plain)
	}
	return kept
}

// userConfigMap returns the plain name of a ConfigMap generated from one of
// UserConfigMaps (its name plus "-" and kustomize's 10-character hash), or "".
func userConfigMap(obj *unstructured.Unstructured) string {
	if obj.GetKind() != "ConfigMap" {
		return ""
	}
	for _, name := range UserConfigMaps {
		if rest, ok := strings.CutPrefix(obj.GetName(), name+"-"); ok && len(rest) == 10 {
			return name
		}
	}
	return ""
}

// rename replaces every string value in v that is a key of names.
func rename(v any, names map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if s, ok := child.(string); ok {
				if n, ok := names[s]; ok {
					v[k] = n
				}
				continue
			}
			rename(child, names)
		}
	case []any:
		for i, child := range v {
			if s, ok := child.(string); ok {
				if n, ok := names[s]; ok {
					v[i] = n
				}
				continue
			}
			rename(child, names)
		}
	}
}

// pin sets the version label on obj and on every pod or job template inside
// it, and points every container of ours at its digest. Selectors are left
// alone: a Deployment's selector cannot change on upgrade.
func pin(obj *unstructured.Unstructured, o Options) error {
	setVersion(obj.Object, o.Version)
	spec, ok := obj.Object["spec"].(map[string]any)
	if !ok {
		return nil
	}
	ref := obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
	return walk(spec, o, ref)
}

// walk visits a spec: a "template" or "jobTemplate" is a nested object
// whose pods the version label must reach, and a container list is where
// images are named.
func walk(m map[string]any, o Options, ref string) error {
	for key, v := range m {
		switch key {
		case "template", "jobTemplate":
			if t, ok := v.(map[string]any); ok {
				setVersion(t, o.Version)
			}
		case "containers", "initContainers", "ephemeralContainers":
			list, _ := v.([]any)
			for _, c := range list {
				if c, ok := c.(map[string]any); ok {
					if err := pinImage(c, o, ref); err != nil {
						return err
					}
				}
			}
			continue
		}
		if child, ok := v.(map[string]any); ok {
			if err := walk(child, o, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

func setVersion(obj map[string]any, version string) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	labels, ok := meta["labels"].(map[string]any)
	if !ok {
		labels = map[string]any{}
		meta["labels"] = labels
	}
	labels[VersionLabel] = version
}

// pinImage rewrites a container image of ours to Registry/<name>@<digest>.
// Any other image is refused: a published manifest must not pull a tag.
func pinImage(c map[string]any, o Options, ref string) error {
	image, _ := c["image"].(string)
	name := imageName(image)
	digest, ok := o.Digests[name]
	if !ok {
		return fmt.Errorf("%s: container %v runs image %q, which is not one of ours (kubehz/observer, kubehz/actor); the release cannot pin it", ref, c["name"], image)
	}
	c["image"] = Registry + "/" + name + "@" + digest
	return nil
}

// imageName returns observer or actor when image names kubehz/observer or
// kubehz/actor under any registry, tag or digest, and "" otherwise.
func imageName(image string) string {
	repo, _, _ := strings.Cut(image, "@")
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	parts := strings.Split(repo, "/")
	if len(parts) < 2 || parts[len(parts)-2] != "kubehz" {
		return ""
	}
	name := parts[len(parts)-1]
	if name != "observer" && name != "actor" {
		return ""
	}
	return name
}

package upgrade

// ControlPlaneGate decides which control-plane version the upgrade
// pre-flight may trust. On a highly available control plane upgraded one
// node at a time, /version answers from whichever apiserver the connection
// lands on, so one sample can open the skew gate while other members are
// still older. The trusted version is therefore the minimum over every
// source the actor reads (each control-plane Node's kubelet, each
// kube-apiserver static pod's image tag, /version), and only once that
// minimum has held on several consecutive reads over some seconds. Any
// source that fails or answers something that is not a version keeps the
// gate closed.
//
// Everything here is pure: the executor reads the sources and the clock and
// feeds the samples in.

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
)

// Stability: the same minimum on this many consecutive samples, the first
// at least GateSpan before the last. One upgrade pass samples at most twice
// (on the caches, then on direct reads before a roll), so three samples
// always span two passes.
const (
	GateSamples = 3
	GateSpan    = 10 * time.Second
)

// maxVersionLen bounds a reading: a Kubernetes version is about 20 bytes;
// anything far longer is not one.
const maxVersionLen = 64

// VersionReading is one source's word on the version it runs.
type VersionReading struct {
	Source  string // what was read, for the logs: "Node cp-1", "/version"
	Version string // as read; untrusted
}

// VersionSample is one read of every source.
type VersionSample struct {
	At       time.Time
	Readings []VersionReading
	Err      error // a source could not be read: the sample vouches for nothing
}

// MinimumVersion returns the oldest version among the readings, in canonical form
// ("v" + major.minor.patch[-pre-release], build metadata dropped since it
// does not order), and the source that reported it. why is non-empty, and
// version empty, when there is no reading or any reading is not a strict
// semantic version of bounded length. Of equal versions the first read
// names the source; the version itself is the same whichever it is.
func MinimumVersion(readings []VersionReading) (v, source, why string) {
	if len(readings) == 0 {
		return "", "", "no source reported a version"
	}
	var lowest *version.Version
	for _, r := range readings {
		parsed, err := parseReading(r.Version)
		if err != nil {
			return "", "", fmt.Sprintf("%s: %v", r.Source, err)
		}
		if lowest == nil || parsed.LessThan(lowest) {
			lowest, source = parsed, r.Source
		}
	}
	return canonicalMinimum(lowest), source, ""
}

func parseReading(s string) (*version.Version, error) {
	if len(s) > maxVersionLen {
		return nil, fmt.Errorf("version of %d bytes is not a version", len(s))
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("no version")
	}
	v, err := version.ParseSemantic(s)
	if err != nil {
		return nil, fmt.Errorf("not a version: %q", s)
	}
	return v, nil
}

func canonicalMinimum(v *version.Version) string {
	return "v" + v.WithBuildMetadata("").String()
}

// ControlPlaneGate remembers the current run of equal minima; its zero value has seen
// nothing. One lives for one leadership term: a new leader samples afresh.
type ControlPlaneGate struct {
	version     string // the minimum the run agrees on; "" when there is no run
	first, last time.Time
	count       int
}

// Observe feeds one sample and returns the version the gate vouches for,
// or "" and why not. A failed or unreadable sample, a different minimum or
// a sample older than the last (a clock stepped back) starts over.
func (g *ControlPlaneGate) Observe(s VersionSample) (vouched, why string) {
	if s.Err != nil {
		*g = ControlPlaneGate{}
		return "", fmt.Sprintf("cannot read every source: %v", s.Err)
	}
	v, _, why := MinimumVersion(s.Readings)
	if why != "" {
		*g = ControlPlaneGate{}
		return "", why
	}
	if g.count == 0 || v != g.version || s.At.Before(g.last) {
		*g = ControlPlaneGate{version: v, first: s.At, last: s.At, count: 1}
	} else {
		g.count++
		g.last = s.At
	}
	held := g.last.Sub(g.first)
	if g.count < GateSamples || held < GateSpan {
		return "", fmt.Sprintf("minimum %s read %d time(s) over %s; trusted after %d reads over %s",
			v, g.count, held, GateSamples, GateSpan)
	}
	return v, ""
}

// ImageTag returns the tag of a container image reference, or "" when it
// has none (a bare name, or a digest only): "registry:5000/kube-apiserver:v1.35.6@sha256:…"
// gives "v1.35.6".
func ImageTag(image string) string {
	image, _, _ = strings.Cut(image, "@")
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	if !ok {
		return ""
	}
	return tag
}

package safety_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"kubehz.dev/agent/actor/internal/desired"
)

// newDocument generates the next desired document: any subset of the
// cluster's pools plus names it does not have, invalid names and
// duplicates; each execution flag at random; any healing policy; any
// kubernetesVersion, downgrades, skew violations and garbage included.
func newDocument(r *rand.Rand, w *world, prev desired.Document) desired.Document {
	d := desired.Document{Revision: prev.Revision + 1}
	if chance(r, 0.1) {
		d.Revision = prev.Revision // the same revision, changed anyway
	}
	for _, m := range w.mds {
		if chance(r, 0.7) {
			d.WorkerPools = append(d.WorkerPools, newPool(r, m.name))
		}
	}
	for _, extra := range []string{"ghost-pool", "Bad_Name", "", "a..b"} {
		if chance(r, 0.06) {
			d.WorkerPools = append(d.WorkerPools, newPool(r, extra))
		}
	}
	if len(d.WorkerPools) > 0 && chance(r, 0.04) {
		d.WorkerPools = append(d.WorkerPools, newPool(r, pick(r, d.WorkerPools).Name))
	}
	r.Shuffle(len(d.WorkerPools), func(i, j int) { d.WorkerPools[i], d.WorkerPools[j] = d.WorkerPools[j], d.WorkerPools[i] })
	d.Execution = desired.Execution{Scaling: chance(r, 0.55), Upgrades: chance(r, 0.55), Healing: chance(r, 0.6)}
	d.Healing = desired.Healing{
		Enabled:                   chance(r, 0.75),
		MaxUnhealthy:              r.IntN(5),
		NodeStartupTimeoutSeconds: pick(r, []int64{0, 30, 60, 300, 600, 1200}),
		UnhealthyAfterSeconds:     pick(r, []int64{0, 60, 300, 600}),
		CooldownSeconds:           pick(r, []int64{0, 0, 60, 300, 900}),
	}
	hostileHealing(r, &d)
	d.KubernetesVersion = newTarget(r, w.cp)
	if chance(r, 0.25) {
		d.KubernetesVersion = versionTarget(r, w)
	}
	return d
}

func newPool(r *rand.Rand, name string) desired.Pool {
	p := desired.Pool{Name: name, MachineType: "cpx31"}
	if !chance(r, 0.1) {
		n := int64(r.IntN(6))
		switch {
		case chance(r, 0.04):
			n = -1
		case chance(r, 0.04):
			n = 60 // above KUBEHZ_MAX_REPLICAS
		}
		p.DesiredReplicas = &n
	}
	return p
}

// newTarget is a kubernetesVersion around the control plane's minor: up,
// down, past the skew policy, or not a version at all.
func newTarget(r *rand.Rand, cp string) *string {
	if chance(r, 0.12) {
		return nil
	}
	minor := 33
	if v, ok := parseVersion(cp); ok {
		minor = v.minor
	}
	var s string
	switch {
	case chance(r, 0.04):
		s = "garbage"
	case chance(r, 0.03):
		s = "v2.0.0"
	case chance(r, 0.03):
		s = "v1"
	default:
		s = version(r, minor-4+r.IntN(6))
	}
	if chance(r, 0.05) {
		s = "  " + s + " "
	}
	// The poller trims and maps empty to null before the executor sees it.
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return &s
}

func docDump(d desired.Document) string {
	var pools []string
	for _, p := range d.WorkerPools {
		n := "nil"
		if p.DesiredReplicas != nil {
			n = fmt.Sprint(*p.DesiredReplicas)
		}
		pools = append(pools, fmt.Sprintf("%q:%s", p.Name, n))
	}
	v := "null"
	if d.KubernetesVersion != nil {
		v = fmt.Sprintf("%q", *d.KubernetesVersion)
	}
	return fmt.Sprintf("rev=%d pools=[%s] exec=%+v healing=%+v version=%s",
		d.Revision, strings.Join(pools, " "), d.Execution, d.Healing, v)
}

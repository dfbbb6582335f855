package safety_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// Invariant 5 on versions (issue 22, points 1, 2 and 4), and the stimuli
// that reach it. The rules are written here from the README's grammar and
// semver's order, not taken from package upgrade; the library both sides
// use to order versions is the one well-kept piece they share.

// maxTargetBytes is the longest target the actor may write.
const maxTargetBytes = 64

// strictTarget is vMAJOR.MINOR.PATCH[-PRERELEASE] without leading zeros,
// each pre-release identifier a number or starting with a letter.
var strictTarget = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)` +
	`(-(0|[1-9][0-9]*|[A-Za-z][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[A-Za-z][0-9A-Za-z-]*))*)?$`)

// strictSpelling says s is a target the grammar accepts, its numbers within
// the 64 bits the library reads.
func strictSpelling(s string) bool {
	if len(s) > maxTargetBytes || !strictTarget.MatchString(s) {
		return false
	}
	for _, f := range strings.FieldsFunc(s[1:], func(r rune) bool { return r == '.' || r == '-' }) {
		if strings.Trim(f, "0123456789") == "" {
			if _, err := strconv.ParseUint(f, 10, 64); err != nil {
				return false
			}
		}
	}
	return true
}

// readKubelet reads a kubelet version as the cluster may spell it (with or
// without a "v", with build metadata); ok is false when it names no
// three-number semantic version.
func readKubelet(s string) (*utilversion.Version, bool) {
	v, err := utilversion.ParseSemantic(s)
	return v, err == nil
}

// ownedBy says the Machine is one pool d's roll replaces: its MachineSet is
// d's, or d's selector resolves it.
func (w *world) ownedBy(m *machine, pool string) bool {
	return w.owner(m) == pool || w.poolOf(m) == pool
}

// checkRollVersions judges a kubelet patch of pool d: the target must be
// spelt strictly, lie above the pool's template as semver orders versions
// (so neither a downgrade nor the same version rolled again), and not lie
// below, nor over an unreadable version on, any live Machine of the pool.
func (c *checker) checkRollVersions(wr *write, d *md) {
	target := *wr.kubelet
	if !strictSpelling(target) {
		c.fail("5 (versions)", "%s: the target is not a strict vMAJOR.MINOR.PATCH[-pre-release] of at most %d bytes",
			wr, maxTargetBytes)
		return
	}
	want, err := utilversion.ParseSemantic(target)
	if err != nil {
		c.fail("5 (versions)", "%s: the library cannot read the target: %v", wr, err)
		return
	}
	if want.PreRelease() != "" {
		c.totals.versions.preReleaseRolls++
	}
	if d == nil {
		return
	}
	if cur, ok := readKubelet(d.kubelet); !ok {
		c.fail("5 (versions)", "%s: replaces the template's unreadable kubelet %q", wr, d.kubelet)
	} else if !want.GreaterThan(cur) {
		c.fail("5 (versions)", "%s: not above the template's kubelet %q (a downgrade, or the same version rolled again)",
			wr, d.kubelet)
	}
	for _, m := range c.w.machines {
		if m.deleting || !c.w.ownedBy(m, d.name) {
			continue
		}
		if v, ok := readKubelet(m.kubelet); !ok {
			c.fail("5 (versions)", "%s: rolls over live Machine %s whose kubelet %q cannot be read", wr, m.name, m.kubelet)
		} else if want.LessThan(v) {
			c.fail("5 (versions)", "%s: rolls live Machine %s down from %q", wr, m.name, m.kubelet)
		}
	}
}

// versionTotals count the version stimuli: a control that the scenarios
// offer the actor each roll the invariant forbids, and that it still rolls
// to pre-releases it may.
type versionTotals struct {
	badTargets      int // steps asking upgrades of a named pool with a target the grammar refuses
	liveDowngrades  int // steps where a named pool's template is below the target and a live Machine above it
	preReleaseRolls int // kubelet patches to a pre-release
}

func (v versionTotals) String() string {
	return fmt.Sprintf("refused targets offered %d; live downgrades offered %d; pre-release rolls %d",
		v.badTargets, v.liveDowngrades, v.preReleaseRolls)
}

// countVersionStimuli counts what this step's document offers the actor
// that invariant 5 forbids.
func (c *checker) countVersionStimuli() {
	if !c.doc.Execution.Upgrades || c.doc.KubernetesVersion == nil || len(c.doc.WorkerPools) == 0 {
		return
	}
	target := *c.doc.KubernetesVersion
	if !strictSpelling(target) {
		c.totals.versions.badTargets++
		return
	}
	want, _ := utilversion.ParseSemantic(target)
	// It runs every step: read each spelling once.
	read := map[string]*utilversion.Version{}
	above := func(s string) bool { // s reads as a version above the target
		v, seen := read[s]
		if !seen {
			v, _ = readKubelet(s)
			read[s] = v
		}
		return v != nil && want.LessThan(v)
	}
	for _, p := range c.doc.WorkerPools {
		d := c.w.md(p.Name)
		if d == nil {
			continue
		}
		if cur, ok := readKubelet(d.kubelet); !ok || !want.GreaterThan(cur) {
			continue
		}
		for _, m := range c.w.machines {
			if !m.deleting && above(m.kubelet) && c.w.ownedBy(m, d.name) {
				c.totals.versions.liveDowngrades++
				return
			}
		}
	}
}

// spellKubelet is how a kubelet version v ("v1.35.6") may read in the
// cluster: as the actor writes it, without its "v", with build metadata, as
// a pre-release of that version, or as two numbers, which cannot be read.
func spellKubelet(r *rand.Rand, v string) string {
	switch {
	case chance(r, 0.05):
		return v + "+k3s1"
	case chance(r, 0.05):
		return v[1:]
	case chance(r, 0.06):
		return v + "-" + pick(r, []string{"rc.1", "rc.2", "rc.10", "beta.0", "alpha.1"})
	case chance(r, 0.01):
		return v[:strings.LastIndex(v, ".")]
	}
	return v
}

// versionTarget is a kubernetesVersion made from a kubelet the cluster
// already runs, to aim at the rolls a loose reading gets wrong: a
// pre-release just below or above it, the same version, or that version
// spelt in a way the grammar refuses.
func versionTarget(r *rand.Rand, w *world) *string {
	var kubelets []string
	for _, d := range w.mds {
		kubelets = append(kubelets, d.kubelet)
	}
	for _, m := range w.machines {
		kubelets = append(kubelets, m.kubelet)
	}
	base, ok := (*utilversion.Version)(nil), false
	if len(kubelets) > 0 {
		base, ok = readKubelet(pick(r, kubelets))
	}
	if !ok {
		base = utilversion.MustParseSemantic("v1.33.0")
	}
	release := fmt.Sprintf("v%d.%d.%d", base.Major(), base.Minor(), base.Patch())
	var s string
	switch r.IntN(6) {
	case 0: // below the release, above an earlier pre-release of it
		s = release + "-" + pick(r, []string{"rc.1", "rc.2", "beta.0"})
	case 1: // the next or previous rc of a pre-release, or its release
		s = release
		if rc, found := strings.CutPrefix(base.PreRelease(), "rc."); found {
			if n, err := strconv.Atoi(rc); err == nil {
				s = fmt.Sprintf("%s-rc.%d", release, max(0, n+pick(r, []int{-1, 1})))
			}
		}
	case 2: // a pre-release of the next patch: above the release
		s = fmt.Sprintf("v%d.%d.%d-rc.1", base.Major(), base.Minor(), base.Patch()+1)
	case 3: // the same version, spelt strictly
		s = release
	default:
		s = oddSpelling(r, base)
	}
	return &s
}

// oddSpelling is version base spelt as the grammar refuses.
func oddSpelling(r *rand.Rand, base *utilversion.Version) string {
	maj, mnr, pat := base.Major(), base.Minor(), base.Patch()
	release := fmt.Sprintf("v%d.%d.%d", maj, mnr, pat)
	switch r.IntN(11) {
	case 0:
		return release + "+build.1"
	case 1:
		return fmt.Sprintf("v%d.%d.0%d", maj, mnr, pat)
	case 2:
		return fmt.Sprintf("v0%d.%d.%d", maj, mnr, pat)
	case 3:
		return release + " junk"
	case 4:
		return fmt.Sprintf("v%d.%dx.%d", maj, mnr, pat)
	case 5:
		return fmt.Sprintf("%d.%d", maj, mnr)
	case 6:
		return release[1:]
	case 7:
		return release + "\x1b[31m"
	case 8:
		return release + "-rc.01"
	case 9:
		return release + "-" + strings.Repeat("a", maxTargetBytes) // one past the bound, and more
	default:
		return release + "-" + strings.Repeat("x", 100<<10)
	}
}

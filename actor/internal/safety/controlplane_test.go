package safety_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"kubehz.dev/agent/actor/internal/upgrade"
)

// controlPlane is a highly available control plane of one to three
// members, each a control-plane Node (its kubelet) and a kube-apiserver
// static pod, upgraded one piece at a time: mid-upgrade the members
// disagree. The world's cp is the version every piece has reached, the
// oldest; next is the version an upgrade under way goes to, "" when none
// runs. /version answers from any member's apiserver.
type controlPlane struct {
	members []*member
	next    string
	reads   []cpRead // every read the actor made of the sources, oldest first
}

type member struct {
	name               string
	kubelet, apiserver string
}

// cpRead is one read of every source, judged by the test's own parser: ok
// when every source answered with a version, min the oldest of them.
type cpRead struct {
	at  time.Time
	ok  bool
	min semver
}

// startControlPlane gives a new world its members, in three scenarios of
// ten halfway through an upgrade.
func startControlPlane(r *rand.Rand, w *world) {
	for i := range 1 + r.IntN(3) {
		w.plane.members = append(w.plane.members, &member{name: fmt.Sprintf("cp-%d", i+1), kubelet: w.cp, apiserver: w.cp})
	}
	if chance(r, 0.3) {
		beginControlPlaneUpgrade(r, w)
		upgradeControlPlane(r, w, 0.5)
	}
}

// advanceControlPlane starts an upgrade now and then and moves one under
// way on.
func advanceControlPlane(r *rand.Rand, w *world) {
	if w.plane.next == "" && chance(r, 0.05) {
		beginControlPlaneUpgrade(r, w)
	}
	upgradeControlPlane(r, w, 0.3)
}

func beginControlPlaneUpgrade(r *rand.Rand, w *world) {
	if v, ok := parseVersion(w.cp); ok && v.major == 1 {
		w.plane.next = fmt.Sprintf("v1.%d.%d", v.minor+1, r.IntN(10))
	}
}

// upgradeControlPlane moves each piece not yet at next there with
// probability p, in either order: kubeadm replaces the apiserver before the
// kubelet, but nothing stops an operator doing the reverse. Once every piece
// is there, cp is next.
func upgradeControlPlane(r *rand.Rand, w *world, p float64) {
	next := w.plane.next
	if next == "" {
		return
	}
	done := true
	for _, m := range w.plane.members {
		if m.apiserver != next && chance(r, p) {
			m.apiserver = next
		}
		if m.kubelet != next && chance(r, p) {
			m.kubelet = next
		}
		done = done && m.apiserver == next && m.kubelet == next
	}
	if done {
		w.cp, w.plane.next = next, ""
	}
}

// mixed says the members disagree: an upgrade is half done.
func (p *controlPlane) mixed() bool {
	for _, m := range p.members {
		if m.kubelet != p.members[0].kubelet || m.apiserver != p.members[0].kubelet {
			return true
		}
	}
	return false
}

// record keeps one read of the sources, versions as the actor received them
// ("" for a failed read).
func (p *controlPlane) record(at time.Time, versions []string) {
	rd := cpRead{at: at, ok: len(versions) > 0}
	for i, s := range versions {
		v, ok := parseVersion(s)
		if !ok {
			rd.ok = false
			break
		}
		if i == 0 || v.less(rd.min) {
			rd.min = v
		}
	}
	p.reads = append(p.reads, rd)
}

// checkStableControlPlane is the stability half of invariant 5. A roll
// starts on a direct read made after a pass on the caches decided to roll,
// so the reads before that last one must already hold the same
// control-plane version on at least 3 reads, the first at least 10 s before
// the third, with no failed read between; and the last read must agree.
func (c *checker) checkStableControlPlane(wr *write) {
	reads := c.w.plane.reads
	n := len(reads)
	if n == 0 || !reads[n-1].ok {
		c.fail("5 (versions)", "%s: sent without a successful read of the control plane's version", wr)
		return
	}
	last := reads[n-1]
	first := n - 1
	for first > 0 && reads[first-1].ok && reads[first-1].min == last.min {
		first--
	}
	// Before the confirming read: reads[first : n-1].
	if held := n - 1 - first; held < 3 || reads[n-2].at.Sub(reads[first].at) < 10*time.Second {
		c.fail("5 (versions)", "%s: control plane %v read the same only %d time(s) over %s before the confirming read",
			wr, last.min, max(held, 0), reads[max(n-2, first)].at.Sub(reads[first].at))
	}
}

func (p *controlPlane) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  control plane next=%q", p.next)
	for _, m := range p.members {
		fmt.Fprintf(&b, " %s(kubelet %s, apiserver %s)", m.name, m.kubelet, m.apiserver)
	}
	return b.String() + "\n"
}

// ControlPlaneVersions answers as the actor's reader would: every member's
// Node, every member's apiserver pod (one that has just restarted into the
// new version may be missing for a moment, its mirror pod not yet back),
// and /version from any member. At the scenario's rate a source fails, or
// answers what is not a version (a kubelet not yet reported, an image
// pinned by digest only).
func (a *apiserver) ControlPlaneVersions(ctx context.Context) ([]upgrade.VersionReading, error) {
	a.reads++
	p := &a.w.plane
	if p.mixed() {
		a.check.totals.cpMixed++
	}
	if a.fail(a.f.version) {
		p.record(a.w.now, nil)
		return nil, errors.New("list kube-apiserver pods in kube-system: forbidden")
	}
	var out []upgrade.VersionReading
	for _, m := range p.members {
		out = append(out, upgrade.VersionReading{Source: "Node " + m.name, Version: m.kubelet})
		if m.apiserver != p.next || !chance(a.r, 0.2) {
			out = append(out, upgrade.VersionReading{Source: "Pod kube-system/kube-apiserver-" + m.name, Version: m.apiserver})
		}
	}
	out = append(out, upgrade.VersionReading{Source: "/version", Version: pick(a.r, p.members).apiserver})
	if a.fail(a.f.version) {
		out[a.r.IntN(len(out))].Version = pick(a.r, []string{"", "sha256"})
	}
	versions := make([]string, len(out))
	for i, rd := range out {
		versions[i] = rd.Version
	}
	p.record(a.w.now, versions)
	return out, nil
}

package safety_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// write is one write the fake apiserver received.
type write struct {
	kind     string // "patch", "deleteMachine" or "deletePod"
	ns, name string
	uid, rv  string  // the delete's preconditions, or the patch's resourceVersion
	replicas *int64  // a patch's spec.replicas
	shrinks  int64   // how far that lowers spec.replicas as it stood
	unread   bool    // spec.replicas as it stood was unreadable
	takes    int     // how many Machines a kubelet patch lets machine-controller take down at once
	kubelet  *string // a patch's spec.template.spec.versions.kubelet
	badBody  error   // a patch body that is not one of the two the actor may send
	granted  bool    // it arrived under a live fence grant
	err      error   // the answer
	applied  bool    // the apiserver wrote it, whatever the answer says
}

func (wr write) String() string {
	s := fmt.Sprintf("%s %s/%s", wr.kind, wr.ns, wr.name)
	if wr.replicas != nil {
		s += fmt.Sprintf(" replicas=%d", *wr.replicas)
	}
	if wr.kubelet != nil {
		s += fmt.Sprintf(" kubelet=%q", *wr.kubelet)
	}
	return s + fmt.Sprintf(" granted=%v err=%v", wr.granted, wr.err)
}

// patchBody is every field an actor's merge patch may carry; anything else
// in a body is refused by decoding.
type patchBody struct {
	Metadata *struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int64 `json:"replicas"`
		Template *struct {
			Spec struct {
				Versions struct {
					Kubelet *string `json:"kubelet"`
				} `json:"versions"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func (a *apiserver) PatchMD(ctx context.Context, ns, name string, body []byte) error {
	wr := write{kind: "patch", ns: ns, name: name, granted: a.fence.granted(ctx)}
	var p patchBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	wr.badBody = dec.Decode(&p)
	if p.Metadata != nil {
		wr.rv = p.Metadata.ResourceVersion
	}
	wr.replicas = p.Spec.Replicas
	if p.Spec.Template != nil {
		wr.kubelet = p.Spec.Template.Spec.Versions.Kubelet
	}
	if wr.badBody == nil && (wr.replicas == nil) == (wr.kubelet == nil) {
		wr.badBody = fmt.Errorf("body %s sets neither or both of replicas and kubelet", body)
	}
	a.check.onWrite(&wr)
	d := a.w.md(name)
	switch {
	case a.fail(a.f.write):
		wr.err = a.writeError(mdGR, name)
	case d == nil:
		wr.err = notFound(mdGR, name)
	case wr.rv != "" && wr.rv != strconv.Itoa(d.rv):
		wr.err = conflict(mdGR, name)
	default:
		if wr.replicas != nil {
			n := *wr.replicas
			d.replicas = &n
		}
		if wr.kubelet != nil {
			d.kubelet = *wr.kubelet
		}
		d.rv++
		wr.applied = true
		if a.fail(a.f.lost) {
			wr.err = errors.New("http2: client connection lost")
		}
	}
	return a.received(wr)
}

func (a *apiserver) DeleteMachine(ctx context.Context, ns, name string, uid types.UID, rv string) error {
	wr := write{kind: "deleteMachine", ns: ns, name: name, uid: string(uid), rv: rv, granted: a.fence.granted(ctx)}
	a.check.onWrite(&wr)
	a.takeTime()
	m := a.w.machine(name)
	switch {
	case a.fail(a.f.write):
		wr.err = a.writeError(machineGR, name)
	case m == nil:
		wr.err = notFound(machineGR, name)
	case wr.uid != "" && wr.uid != m.uid, wr.rv != "" && wr.rv != strconv.Itoa(m.rv):
		wr.err = conflict(machineGR, name)
	case !m.deleting:
		m.deleting, m.deletedAt = true, a.w.now
		m.rv++
		wr.applied = true
		if a.fail(a.f.lost) {
			wr.err = errors.New("http2: client connection lost")
		}
	}
	return a.received(wr)
}

func (a *apiserver) DeletePod(ctx context.Context, ns, name string, uid types.UID) error {
	wr := write{kind: "deletePod", ns: ns, name: name, uid: string(uid), granted: a.fence.granted(ctx)}
	a.check.onWrite(&wr)
	a.takeTime()
	i := slices.IndexFunc(a.w.pods, func(p *pod) bool { return p.ns == ns && p.name == name })
	switch {
	case a.fail(a.f.write):
		wr.err = a.writeError(podGR, name)
	case i < 0:
		wr.err = notFound(podGR, name)
	case wr.uid != "" && wr.uid != a.w.pods[i].uid:
		wr.err = conflict(podGR, name)
	default:
		a.w.pods = slices.Delete(a.w.pods, i, i+1)
	}
	return a.received(wr)
}

// received logs an answered write and lets the checker learn what it did.
func (a *apiserver) received(wr write) error {
	a.check.answered(wr)
	if a.trace != nil {
		*a.trace = append(*a.trace, wr.String())
	}
	return wr.err
}

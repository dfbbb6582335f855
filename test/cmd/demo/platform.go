package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"kubehz.dev/agent/test/platformsim"
)

// beat is what the view and the story read of one accepted heartbeat:
// the platform's side of the wire, decoded on its own terms.
type beat struct {
	Seq        uint64    `json:"-"`
	At         time.Time `json:"-"`
	HasActions bool      `json:"-"` // the key was sent; absent means "clear your list"

	Nodes []struct {
		Name, Status, Roles, InstanceType, KubeletVersion string
	}
	Workloads struct {
		Pods struct{ Total, Running, Pending, Failed, Succeeded, Unknown int }
	}
	Events []struct {
		Reason, Kind, Namespace, Note string
		Count                         int
	}
	Actions       []action
	MachineIssues []struct{ Pool, Machine, Reason, Message string }
	Pools         []struct {
		Name            string
		Replicas, Ready int
	}
}

type action struct {
	Type, Target, Status, Detail string
	Revision                     int64
}

// decodeBeat reads an accepted heartbeat; ok is false for anything else.
func decodeBeat(r platformsim.Request) (beat, bool) {
	var b beat
	if r.Endpoint != platformsim.EndpointHeartbeat || r.Status/100 != 2 || json.Unmarshal(r.Body, &b) != nil {
		return beat{}, false
	}
	b.Seq, b.At = r.Seq, r.Time
	_, b.HasActions = r.Payload["actions"]
	return b, true
}

func (b beat) action(typ, target string) (action, bool) {
	for _, a := range b.Actions {
		if a.Type == typ && a.Target == target {
			return a, true
		}
	}
	return action{}, false
}

func (b beat) pool(name string) (replicas, ready int, ok bool) {
	for _, p := range b.Pools {
		if p.Name == name {
			return p.Replicas, p.Ready, true
		}
	}
	return 0, 0, false
}

func (b beat) hasNode(name string) bool {
	for _, n := range b.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// platform is the simulated platform as the demo shows it: the newest
// accepted beat, and counts of what arrived.
type platform struct {
	sim *platformsim.Server

	mu     sync.Mutex
	latest beat
	got    bool
}

func newPlatform() *platform {
	p := &platform{}
	p.sim = platformsim.New(platformsim.Options{OnRequest: p.record})
	return p
}

func (p *platform) record(r platformsim.Request) {
	b, ok := decodeBeat(r)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latest, p.got = b, true
}

// Latest is the newest accepted beat; ok is false before the first.
func (p *platform) Latest() (beat, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latest, p.got
}

// setDesired serves d as the desired state, its revision as the ETag.
func (p *platform) setDesired(d desired) error {
	return p.sim.SetDesired(d.doc(), fmt.Sprintf(`"%d-1"`, d.rev))
}

// await waits for a beat later than since that ok accepts, at most timeout.
func (p *platform) await(ctx context.Context, since uint64, timeout time.Duration, ok func(beat) bool) (beat, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := p.sim.WaitBeat(ctx, func(r platformsim.Request) bool {
		b, decoded := decodeBeat(r)
		return decoded && r.Seq > since && ok(b)
	})
	if err != nil {
		return beat{}, err
	}
	b, _ := decodeBeat(r)
	return b, nil
}

// desired is what the simulated platform asks for: pool workers-a's size,
// and which of the actor's three jobs it authorizes.
type desired struct {
	rev      int64
	replicas int
	healing  bool   // with a 60 s window, at most 1 unhealthy, no cooldown
	kubelet  string // authorize upgrades to this version; "" for none
}

func (d desired) doc() map[string]any {
	doc := map[string]any{
		"revision":    d.rev,
		"workerPools": []any{map[string]any{"name": poolName, "machineType": "cpx31", "desiredReplicas": d.replicas}},
		"execution":   map[string]any{"scaling": true, "upgrades": d.kubelet != "", "healing": d.healing},
		// The startup window is an hour so the pool whose servers cannot be
		// created never becomes a healing candidate during the demo.
		"healing": map[string]any{"enabled": d.healing, "maxUnhealthy": 1, "unhealthyAfterSeconds": 60,
			"nodeStartupTimeoutSeconds": 3600, "cooldownSeconds": 0},
	}
	if d.kubelet != "" {
		doc["kubernetesVersion"] = d.kubelet
	}
	return doc
}

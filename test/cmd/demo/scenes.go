package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/platformsim"
)

func (s *story) scale(ctx context.Context) error {
	since := s.plat.sim.Seq()
	s.screen.note("The platform asks for 3 machines in %s (desired state, revision 2)", poolName)
	if err := s.plat.setDesired(desired{rev: 2, replicas: 3}); err != nil {
		return err
	}
	_, err := s.await(ctx, since, "the actor reports the scale done and the beat shows 3 ready machines", func(b beat) bool {
		a, ok := b.action("scale", poolName)
		_, ready, _ := b.pool(poolName)
		return ok && a.Status == "done" && ready == 3
	})
	if err == nil {
		s.screen.note("The leading actor set the pool to 3; a new server joined and the platform sees it Ready")
	}
	return err
}

func (s *story) heal(ctx context.Context) error {
	victim, err := s.liveMachine(ctx)
	if err != nil {
		return err
	}
	since := s.plat.sim.Seq()
	// Down since five minutes ago: past the 60 s healing window at once,
	// so nobody waits a minute for it.
	if err := s.world.SetNodeCondition(ctx, victim.Node, corev1.ConditionFalse, time.Now().Add(-5*time.Minute)); err != nil {
		return err
	}
	s.screen.note("Server %s stops answering: its node has been NotReady for 5 minutes", victim.Node)
	if _, err := s.await(ctx, since, "the beat shows node "+victim.Node+" NotReady", func(b beat) bool {
		for _, n := range b.Nodes {
			if n.Name == victim.Node && n.Status == "NotReady" {
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	since = s.plat.sim.Seq()
	s.screen.note("The platform allows self-healing (revision 3): at most 1 unhealthy worker, after 60 s")
	if err := s.plat.setDesired(desired{rev: 3, replicas: 3, healing: true}); err != nil {
		return err
	}
	if _, err := s.await(ctx, since, "the actor reports machine "+victim.Name+" healed", func(b beat) bool {
		a, ok := b.action("heal", victim.Name)
		return ok && a.Status == "done"
	}); err != nil {
		return err
	}
	s.screen.note("The actor deleted machine %s; its MachineSet creates a replacement", victim.Name)
	if _, err := s.await(ctx, since, "the dead node is gone and the pool has 3 ready machines again", func(b beat) bool {
		_, ready, _ := b.pool(poolName)
		return !b.hasNode(victim.Node) && ready == 3
	}); err != nil {
		return err
	}
	s.screen.note("The replacement joined: %s has 3 ready machines again", poolName)
	return nil
}

// liveMachine is the oldest joined, Ready machine of the story's pool.
func (s *story) liveMachine(ctx context.Context) (clustersim.MachineInfo, error) {
	ms, err := s.world.Machines(ctx, poolName)
	if err != nil {
		return clustersim.MachineInfo{}, err
	}
	for _, m := range ms {
		if m.Ready && !m.Deleting {
			return m, nil
		}
	}
	return clustersim.MachineInfo{}, fmt.Errorf("no ready machine in %s to stop", poolName)
}

func (s *story) upgrade(ctx context.Context) error {
	since := s.plat.sim.Seq()
	s.screen.note("The platform asks for kubelet %s on every worker (revision 4); the pool runs %s", newKubelet, oldKubelet)
	if err := s.plat.setDesired(desired{rev: 4, replicas: 3, healing: true, kubelet: newKubelet}); err != nil {
		return err
	}
	// Tell each step of the roll as the beats report it.
	deadline := time.Now().Add(s.pace.timeout)
	last := ""
	for {
		b, err := s.plat.await(ctx, since, time.Until(deadline), func(b beat) bool {
			a, ok := b.action("upgrade", poolName)
			return ok && a.Status+a.Detail != last
		})
		if err != nil {
			return s.timedOut(ctx, err, "the actor reports the upgrade of "+poolName+" done")
		}
		a, _ := b.action("upgrade", poolName)
		last, since = a.Status+a.Detail, b.Seq
		s.screen.note("Upgrade of %s: %s, %s", poolName, a.Status, a.Detail)
		switch a.Status {
		case "done":
			return s.allAt(ctx, since)
		case "failed":
			// A new leader trusts the control plane's version only once
			// every source agreed on it for a few reads; until then the
			// refusal says so and retries by itself.
			if strings.HasPrefix(a.Detail, "control plane version unknown") {
				continue
			}
			return fmt.Errorf("the actor refused the upgrade: %s", a.Detail)
		}
	}
}

// allAt waits until every node of the pool the beat shows runs the new kubelet.
func (s *story) allAt(ctx context.Context, since uint64) error {
	ms, err := s.world.Machines(ctx, poolName)
	if err != nil {
		return err
	}
	_, err = s.await(ctx, since-1, "every "+poolName+" node on the beat runs kubelet "+newKubelet, func(b beat) bool {
		n := 0
		for _, node := range b.Nodes {
			for _, m := range ms {
				if m.Node == node.Name && !m.Deleting {
					if node.KubeletVersion != newKubelet {
						return false
					}
					n++
				}
			}
		}
		return n == 3
	})
	if err == nil {
		s.screen.note("Every %s node now runs kubelet %s, replaced one at a time", poolName, newKubelet)
	}
	return err
}

func (s *story) killSwitch(ctx context.Context) error {
	since := s.plat.sim.Seq()
	s.screen.note("An operator pulls the plug: kubectl -n kubehz-system delete deployment actor")
	if err := s.client.AppsV1().Deployments("kubehz-system").Delete(ctx, "actor", metav1.DeleteOptions{}); err != nil {
		return err
	}
	deleted := time.Now()
	if _, err := s.await(ctx, since, "a beat without the actor's reports", func(b beat) bool { return !b.HasActions }); err != nil {
		return err
	}
	s.screen.note("The beats no longer carry the actor's reports: the platform clears its list of actions")

	since = s.plat.sim.Seq()
	s.screen.note("The platform now asks for 4 machines (revision 5); watching for %s that nobody acts on it", s.pace.quiet)
	if err := s.plat.setDesired(desired{rev: 5, replicas: 4, healing: true, kubelet: newKubelet}); err != nil {
		return err
	}
	if err := sleep(ctx, s.pace.quiet); err != nil {
		return err
	}
	beats, fetches := 0, 0
	for _, r := range s.plat.sim.Requests() {
		b, ok := decodeBeat(r)
		switch {
		case ok && r.Seq > since:
			if b.HasActions {
				return fmt.Errorf("heartbeat #%d still carries the actor's reports after the delete", r.Seq)
			}
			beats++
		case r.Endpoint == platformsim.EndpointDesired && r.Time.After(deleted.Add(2*time.Second)):
			fetches++
		}
	}
	if beats < 2 {
		return fmt.Errorf("only %d heartbeat(s) arrived in %s after the delete; the observer should keep beating", beats, s.pace.quiet)
	}
	ms, err := s.world.Machines(ctx, poolName)
	if err != nil {
		return err
	}
	if live := countLive(ms); live != 3 {
		return fmt.Errorf("%s has %d machines after the delete, want it left at 3", poolName, live)
	}
	s.screen.note("In %s: %d heartbeats arrived, none with actions; %s still has 3 machines; %d request(s) for the desired state since the delete",
		s.pace.quiet, beats, poolName, fetches)
	return nil
}

func countLive(ms []clustersim.MachineInfo) int {
	n := 0
	for _, m := range ms {
		if !m.Deleting {
			n++
		}
	}
	return n
}

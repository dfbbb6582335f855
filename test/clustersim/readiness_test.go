package clustersim

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestSim_SetNodeConditionBackdatesTransition(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.createPool("lambda", 1, PoolOptions{})
	h.converge("lambda")
	name := h.machineInfos("lambda")[0].Node
	// The API keeps whole seconds.
	since := time.Now().Add(-5 * time.Minute).Truncate(time.Second)

	if err := h.sim.SetNodeCondition(t.Context(), name, corev1.ConditionFalse, since); err != nil {
		t.Fatal(err)
	}
	if c := readyCondition(h.node(name)); c.Status != corev1.ConditionFalse || !c.LastTransitionTime.Time.Equal(since) {
		t.Errorf("Ready condition %+v, want False since %s", c, since)
	}
	earlier := since.Add(-time.Hour)
	if err := h.sim.SetNodeCondition(t.Context(), name, corev1.ConditionUnknown, earlier); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.SetNodeCondition(t.Context(), name, "Maybe", since); err == nil {
		t.Error("SetNodeCondition accepted status Maybe")
	}

	// New Machines still join Ready while the dead Node stays as set.
	h.scale("lambda", 2)
	h.eventually("the new Machine joins Ready", 10*time.Second, func() (bool, error) {
		return h.statusCount("lambda", "readyReplicas") == 1 && h.statusCount("lambda", "replicas") == 2, nil
	})
	c := readyCondition(h.node(name))
	if c.Status != corev1.ConditionUnknown || !c.LastTransitionTime.Time.Equal(earlier) || !c.LastHeartbeatTime.Time.Equal(earlier) {
		t.Errorf("Ready condition %+v, want Unknown since %s, last heartbeat then too", c, earlier)
	}

	// SetNodeReady moves the transition only on a change of status.
	if err := h.sim.SetNodeReady(t.Context(), name, false); err != nil {
		t.Fatal(err)
	}
	moved := readyCondition(h.node(name)).LastTransitionTime
	if !moved.After(since) {
		t.Errorf("Unknown → False kept transition %s", moved)
	}
	if err := h.sim.SetNodeReady(t.Context(), name, false); err != nil {
		t.Fatal(err)
	}
	if kept := readyCondition(h.node(name)).LastTransitionTime; !kept.Equal(&moved) {
		t.Errorf("False → False moved transition %s to %s", moved, kept)
	}
}

func TestSim_HoldJoinsKeepsMachineJoinlessUntilReleased(t *testing.T) {
	h := start(t, Options{JoinDelay: 100 * time.Millisecond})
	h.sim.HoldJoins("mu", true)
	h.createPool("mu", 1, PoolOptions{})
	h.eventually("pool mu's Machine created", 10*time.Second, func() (bool, error) {
		return len(h.machineInfos("mu")) == 1, nil
	})
	// A pool created later joins; the passes that join it would have
	// joined mu's older Machine too, were it not held.
	h.createPool("nu", 1, PoolOptions{})
	h.converge("nu")
	held := h.machineInfos("mu")[0]
	if held.Node != "" || h.node(held.Name) != nil {
		t.Fatalf("held Machine %+v joined", held)
	}
	if ok, err := h.sim.Converged(t.Context(), "mu"); ok || err != nil {
		t.Errorf("Converged = %t, %v with a joinless Machine", ok, err)
	}

	h.sim.HoldJoins("mu", false)
	h.converge("mu")
	if joined := h.machineInfos("mu")[0]; joined.Name != held.Name || joined.Node != held.Name || !joined.Ready {
		t.Errorf("after release %+v, want %s joined Ready", joined, held.Name)
	}
}

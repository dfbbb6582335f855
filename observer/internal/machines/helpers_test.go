package machines

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kubehz.dev/agent/observer/internal/cluster"
)

const ns = "kube-system"

// now is the fixed "current time" of every pure test.
var now = time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)

// obj parses a JSON object literal into an unstructured object.
func obj(t testing.TB, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(js), &u.Object); err != nil {
		t.Fatalf("bad fixture %s: %v", js, err)
	}
	return u
}

// joined is a healthy machine: created long ago, Node joined.
func joined(name string, labels map[string]string) *Machine {
	return &Machine{Namespace: ns, Name: name, Labels: labels, Created: now.Add(-time.Hour), Joined: true}
}

func failed(m *Machine, reason, message string) *Machine {
	m.ErrorReason, m.ErrorMessage = reason, message
	return m
}

// pool is an MD selecting machines labelled pool=<name>.
func pool(t testing.TB, name string) *MachineDeployment {
	t.Helper()
	return DeploymentFrom(obj(t, `{"metadata":{"name":"`+name+`","namespace":"`+ns+`"},
		"spec":{"selector":{"matchLabels":{"pool":"`+name+`"}}}}`))
}

func in(p string) map[string]string { return map[string]string{"pool": p} }

func machineEvent(name, machine, reason, message string, lastSeen time.Time) *cluster.Event {
	return &cluster.Event{
		Namespace: ns, Name: name, Reason: reason, Kind: cluster.MachineKind,
		InvolvedNamespace: ns, InvolvedName: machine, Message: message, Warning: true, LastSeen: lastSeen,
	}
}

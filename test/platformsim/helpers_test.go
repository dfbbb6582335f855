package platformsim

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// validBeat is a schema-2 beat that fills every section, with keys the
// platform strips, so each rejection case changes exactly one thing.
func validBeat() map[string]any {
	const doc = `{
	  "schema": 2, "clusterId": "demo.example.net", "timestamp": "2026-07-06T09:15:00Z",
	  "agent": {"version": "1.2.3", "mode": "operator"},
	  "kubernetes": {"version": "v1.35.5"},
	  "nodes": [
	    {"name": "ctl-a", "status": "Ready", "ready": true, "roles": "control-plane",
	     "kubeletVersion": "v1.35.5", "capacity": {"cpu": "2", "memory": "3900Mi"}},
	    {"name": "wrk-b", "status": "NotReady", "ready": false, "roles": "worker", "instanceType": "cpx21"}
	  ],
	  "components": [{"name": "etcd", "status": "Healthy"}],
	  "workloads": {"pods": {"total": 7, "running": 5, "pending": 1, "failed": 0, "succeeded": 1, "unknown": 0,
	                         "byNamespace": {"default": 3, "kube-system": 4}}},
	  "events": [{"reason": "FailedMount", "kind": "Pod", "count": 2, "lastSeen": "2026-07-06T09:14:40Z",
	              "namespace": "default", "note": "volume not found"}],
	  "actions": [{"type": "scale", "target": "workers-a", "status": "done", "detail": "replicas 1 to 2", "revision": 12}],
	  "machineIssues": [{"pool": "workers-a", "machine": "workers-a-7f9c-abcde", "reason": "NodeJoinTimeout",
	                     "message": "no node after 10m0s", "since": "2026-07-06T08:55:00Z"}],
	  "inventory": {"lok8sVersion": "0.9.0", "kind": "hetzner", "provider": "hcloud", "kubernetesVersion": "v1.35.5",
	                "specHash": "abc123", "renderedAt": "2026-07-06T08:00:00Z",
	                "addons": [{"name": "cilium", "chartVersion": "1.16.1", "appVersion": "1.16.1",
	                            "category": "network", "source": "addon"}]},
	  "pools": [{"name": "workers-a", "replicas": 2, "ready": 2}],
	  "desired": {"revision": 12},
	  "somethingNew": {"anything": [1, 2, 3]}
	}`
	m, err := decodeObject([]byte(doc))
	if err != nil {
		panic(err)
	}
	return m
}

// set replaces the value at a dotted path ("actions.0.target"); del removes it.
func set(m map[string]any, path string, v any) map[string]any {
	parent, key := walk(m, path)
	switch p := parent.(type) {
	case map[string]any:
		p[key] = v
	case []any:
		i, _ := strconv.Atoi(key)
		p[i] = v
	}
	return m
}

func del(m map[string]any, path string) map[string]any {
	parent, key := walk(m, path)
	delete(parent.(map[string]any), key)
	return m
}

func walk(m map[string]any, path string) (any, string) {
	keys := strings.Split(path, ".")
	var cur any = m
	for _, k := range keys[:len(keys)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			cur = c[i]
		}
	}
	return cur, keys[len(keys)-1]
}

// repeat replaces the list at path with n copies of its first entry.
func repeat(m map[string]any, path string, n int) map[string]any {
	parent, key := walk(m, path)
	first := parent.(map[string]any)[key].([]any)[0]
	list := make([]any, n)
	for i := range list {
		list[i] = first
	}
	return set(m, path, list)
}

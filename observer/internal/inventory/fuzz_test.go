package inventory

import (
	"encoding/json"
	"testing"

	"kubehz.dev/agent/shared/wire"
)

// FuzzSnapshotFromObject feeds arbitrary JSON in as the CR. The mapping must
// never panic, every addon it keeps has a name, a non-nil result carries
// something, and the status baseline holds named entries only.
func FuzzSnapshotFromObject(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"spec": null}`,
		`{"spec": "x"}`,
		`{"spec": {"lok8sVersion": "0.9.2", "kind": "managed", "addons": [{"name": "cilium"}, {"name": ""}, 1, null]}}`,
		`{"spec": {"addons": {"name": "x"}}, "status": {"availableUpdates": [{"name": 1}, "x", {"name": "a"}]}}`,
		`{"spec": {"kind": ["k"], "provider": {"p": 1}}, "status": {"availableUpdates": null}}`,
		`{"status": []}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var obj map[string]any
		if json.Unmarshal(doc, &obj) != nil {
			return
		}
		if inv := snapshotFromObject(obj); inv != nil {
			if equalInventory(inv, &wire.Inventory{}) {
				t.Errorf("empty snapshot %+v should be nil", inv)
			}
			for i, a := range inv.Addons {
				if a.Name == "" {
					t.Errorf("addon %d has no name: %+v", i, a)
				}
			}
			if _, err := json.Marshal(inv); err != nil {
				t.Errorf("snapshot does not encode: %v", err)
			}
		}
		recorded, baseline := statusFromObject(obj)
		if !recorded && baseline != nil {
			t.Errorf("baseline %v without a recorded list", baseline)
		}
		for i, u := range baseline {
			if u.Name == "" {
				t.Errorf("baseline entry %d has no name: %+v", i, u)
			}
		}
	})
}

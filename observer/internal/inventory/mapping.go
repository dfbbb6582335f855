package inventory

import (
	"slices"

	"kubehz.dev/agent/shared/wire"
)

// maxStatusUpdates is the CRD's maxItems on status.availableUpdates; a longer
// patch would be rejected whole.
const maxStatusUpdates = 256

// The functions below read the ClusterInventory object as untrusted input:
// the CRD may be missing, older or hand-edited, so a field of the wrong type
// reads as absent and nothing here can panic.

// snapshotFromObject copies the object's spec, field for field, onto the
// wire. Addons that are not objects or have no name are skipped. A missing
// spec, or one with nothing usable in it, gives nil: the beat then carries
// no inventory block.
func snapshotFromObject(obj map[string]any) *wire.Inventory {
	spec, _ := obj["spec"].(map[string]any) // indexing a nil map is safe
	inv := &wire.Inventory{
		Lok8sVersion:      str(spec, "lok8sVersion"),
		Kind:              str(spec, "kind"),
		Provider:          str(spec, "provider"),
		KubernetesVersion: str(spec, "kubernetesVersion"),
		SpecHash:          str(spec, "specHash"),
		RenderedAt:        str(spec, "renderedAt"),
		Addons:            addonsFrom(spec["addons"]),
	}
	if equalInventory(inv, &wire.Inventory{}) {
		return nil
	}
	return inv
}

func addonsFrom(v any) []wire.Addon {
	list, _ := v.([]any)
	var out []wire.Addon // stays nil when there are none, so addons is omitted
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		a := wire.Addon{
			Name:         str(m, "name"),
			ChartVersion: str(m, "chartVersion"),
			AppVersion:   str(m, "appVersion"),
			Category:     str(m, "category"),
			Source:       str(m, "source"),
		}
		if a.Name != "" {
			out = append(out, a)
		}
	}
	return out
}

// statusFromObject reads what the agent last wrote. recorded is true only
// when status.availableUpdates exists as a list; null or any other type
// counts as never written, so the next verdict writes. Nameless entries are
// left out of the baseline, as capUpdates would leave them out of a patch.
func statusFromObject(obj map[string]any) (recorded bool, baseline []wire.AvailableUpdate) {
	status, _ := obj["status"].(map[string]any)
	list, ok := status["availableUpdates"].([]any)
	if !ok {
		return false, nil
	}
	baseline = make([]wire.AvailableUpdate, 0, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		u := wire.AvailableUpdate{Name: str(m, "name"), Current: str(m, "current"), Latest: str(m, "latest")}
		if u.Name != "" {
			baseline = append(baseline, u)
		}
	}
	return true, baseline
}

// capUpdates fits a verdict into the CRD: nameless entries dropped, names
// clamped to 253 and versions to 64 UTF-16 units, at most 256 entries kept in
// order. A nil input gives nil; an empty one stays empty.
func capUpdates(in []wire.AvailableUpdate) []wire.AvailableUpdate {
	if in == nil {
		return nil
	}
	out := make([]wire.AvailableUpdate, 0, min(len(in), maxStatusUpdates))
	for _, u := range in {
		if len(out) == maxStatusUpdates {
			break
		}
		if u.Name == "" {
			continue
		}
		out = append(out, wire.AvailableUpdate{
			Name:    wire.Clamp(u.Name, wire.MaxNameLen),
			Current: wire.Clamp(u.Current, wire.MaxVersionLen),
			Latest:  wire.Clamp(u.Latest, wire.MaxVersionLen),
		})
	}
	return out
}

func equalInventory(a, b *wire.Inventory) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Lok8sVersion == b.Lok8sVersion && a.Kind == b.Kind && a.Provider == b.Provider &&
		a.KubernetesVersion == b.KubernetesVersion && a.SpecHash == b.SpecHash &&
		a.RenderedAt == b.RenderedAt && slices.Equal(a.Addons, b.Addons) // nil equals empty
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

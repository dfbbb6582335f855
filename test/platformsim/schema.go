package platformsim

import "encoding/json"

// Bounds the platform enforces on a heartbeat.
const (
	maxCount        = 10_000_000 // HB_MAX_COUNT: every count-like integer
	maxNodes        = 500
	maxComponents   = 50
	maxEvents       = 50
	maxActions      = 20 // HB_MAX_ACTIONS
	maxIssues       = 20 // HB_MAX_MACHINE_ISSUES
	maxAddons       = 100
	maxNote         = 256 // HB_MAX_NOTE_LEN, also action detail and issue message
	maxName         = 253
	maxLabel        = 63
	maxVersionOrTS  = 64
	schemaCurrent   = 2
	schemaBashAgent = 1
)

var (
	name253   = text{max: maxName}
	label63   = text{max: maxLabel}
	version64 = text{max: maxVersionOrTS}
	note256   = text{max: maxNote}
	count     = integer{min: 0, max: maxCount}
)

// heartbeatRule is the payload schema. A schema-2 beat must carry every key
// the contract marks "always"; a schema-1 beat only has to get present keys
// right. nodes is required in both: null or missing is refused.
func heartbeatRule(schema2 bool) object {
	return object{
		{"clusterId", schema2, name253},
		{"timestamp", schema2, version64},
		{"agent", schema2, object{
			{"version", true, version64},
			{"mode", true, text{max: maxLabel, oneOf: []string{"operator", "cronjob"}}},
		}},
		{"kubernetes", schema2, object{{"version", true, version64}}},
		{"nodes", true, array{max: maxNodes, elem: nodeRule}},
		{"components", false, array{max: maxComponents, elem: object{
			{"name", true, name253},
			{"status", true, label63},
		}}},
		{"workloads", schema2, object{
			{"pods", true, podsRule},
			{"deployments", false, object{{"total", true, count}, {"unavailable", true, count}}},
		}},
		{"events", false, array{max: maxEvents, elem: eventRule}},
		{"actions", false, array{max: maxActions, elem: actionRule}},
		{"machineIssues", false, array{max: maxIssues, elem: machineIssueRule}},
		{"inventory", false, inventoryRule},
		{"certificates", false, object{{"expiresAt", false, text{}}}},
	}
}

var nodeRule = object{
	{"name", true, name253},
	{"status", true, text{max: maxLabel, oneOf: []string{"Ready", "NotReady", "Unknown"}}},
	{"ready", true, boolean{}},
	{"roles", true, name253},
	{"instanceType", false, version64},
	{"kubeletVersion", false, version64},
	{"capacity", false, object{{"cpu", false, text{}}, {"memory", false, text{}}}},
}

// byNamespace has no key-count rule: the platform's bound on it is not known,
// and the agent's own 500-key cap is not the platform's to enforce.
var podsRule = object{
	{"total", true, count},
	{"running", true, count},
	{"pending", true, count},
	{"failed", true, count},
	{"succeeded", true, count},
	{"unknown", true, count},
	{"byNamespace", false, record{value: count}},
}

var eventRule = object{
	{"reason", true, label63},
	{"kind", true, label63},
	{"count", true, count},
	{"lastSeen", true, version64}, // the agent always sends it (docs/contract.md#heartbeat-fields)
	{"namespace", false, name253},
	{"note", false, note256},
}

var actionRule = object{
	{"type", true, text{max: maxLabel, oneOf: []string{"scale", "upgrade", "heal"}}},
	{"target", true, text{min: 1, max: maxName}},
	{"status", true, text{max: maxLabel, oneOf: []string{"pending", "in-progress", "done", "failed"}}},
	{"detail", false, note256},
	{"revision", true, count},
}

var machineIssueRule = object{
	{"pool", true, text{min: 1, max: maxLabel}},
	{"machine", false, text{min: 1, max: maxName}},
	{"reason", true, text{min: 1, max: maxLabel}},
	{"message", false, note256},
	{"since", false, version64},
}

var inventoryRule = object{
	{"lok8sVersion", true, version64},
	{"kind", true, label63},
	{"provider", false, label63},
	{"kubernetesVersion", false, version64},
	{"specHash", true, version64},
	{"renderedAt", true, version64},
	{"addons", false, array{max: maxAddons, elem: object{
		{"name", true, name253},
		{"chartVersion", false, version64},
		{"appVersion", false, version64},
		{"category", false, label63},
		{"source", false, label63},
	}}},
}

var (
	schema2Rule = heartbeatRule(true)
	schema1Rule = heartbeatRule(false)
)

// validateHeartbeat lists every issue, in schema order, so one 400 names all
// that is wrong. Keys the schema does not know (pools, desired …) pass
// unchecked because the platform strips them.
func validateHeartbeat(payload map[string]any, allowSchema1 bool) []Issue {
	var issues []Issue
	version, present := payload["schema"]
	switch {
	case !present && allowSchema1:
		schema1Rule.check("", payload, &issues)
		return issues
	case !present:
		fail(&issues, "schema", "required: schema-1 beats are refused unless Options.AllowSchema1")
		return issues
	}
	n, ok := version.(json.Number)
	switch {
	case ok && isNumber(n, schemaCurrent):
		schema2Rule.check("", payload, &issues)
	case ok && allowSchema1 && isNumber(n, schemaBashAgent):
		schema1Rule.check("", payload, &issues)
	default:
		fail(&issues, "schema", "must be %d, got %v", schemaCurrent, version)
	}
	return issues
}

// isNumber compares a JSON number by value, as JavaScript would (2.0 is 2).
func isNumber(n json.Number, want float64) bool {
	f, err := n.Float64()
	return err == nil && f == want
}

// Package desired is the platform's desired-state document: the client-side
// validation that rejects it whole (docs/contract.md#desired-validation),
// and the Poller that fetches it and hands it to the executor (poller.go). A
// document that fails here authorizes nothing: the actor stays report-only.
package desired

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// MaxBytes is the largest body the platform client reads
// (docs/contract.md#desired-request); Decode refuses anything longer rather
// than trust a truncated document.
const MaxBytes = 1 << 20

// PoolsPerPass is how many of a document's pools each capability (scaling,
// upgrades, healing) processes in a pass: the first, after sorting by name
// (docs/contract.md#acting-gate).
const PoolsPerPass = 100

// Bounds of docs/contract.md#desired-validation, wider than the platform's own
// (maxUnhealthy ≤ 100, seconds ≤ 86400), so a server change does not stop the
// agent, while nonsense does.
const (
	MaxUnhealthyLimit = 1000
	MaxSecondsLimit   = 1_000_000
)

// Document is one 200 answer from GET /api/clusters/{id}/desired.
type Document struct {
	// Revision is the server's desired_revision, bumped on every write.
	Revision int64 `json:"revision"`
	// KubernetesVersion is the declared target, trimmed; nil when never
	// declared (null, absent or blank).
	KubernetesVersion *string   `json:"kubernetesVersion"`
	WorkerPools       []Pool    `json:"workerPools"`
	Execution         Execution `json:"execution"`
	Healing           Healing   `json:"healing"`
}

// Pool maps to the MachineDeployment of the exact same name. Per-pool
// problems (bad name, bad replicas) are the executor's to report, not a
// reason to reject the document.
type Pool struct {
	Name        string `json:"name"`
	MachineType string `json:"machineType"` // informational; never used for acting
	// DesiredReplicas is nil when the key is missing, null or not an
	// integer: a plain int would read those as 0 and scale the pool away.
	DesiredReplicas *int64 `json:"-"`
}

// UnmarshalJSON reads desiredReplicas tolerantly: a malformed count is the
// pool's problem (reported for that pool), never the whole document's.
func (p *Pool) UnmarshalJSON(b []byte) error {
	var in struct {
		Name            string          `json:"name"`
		MachineType     string          `json:"machineType"`
		DesiredReplicas json.RawMessage `json:"desiredReplicas"`
	}
	if err := decodeExact(b, &in); err != nil {
		return err
	}
	out := Pool{Name: in.Name, MachineType: in.MachineType}
	var n int64
	if raw := in.DesiredReplicas; raw != nil && string(raw) != "null" && json.Unmarshal(raw, &n) == nil {
		out.DesiredReplicas = &n
	}
	*p = out
	return nil
}

// MarshalJSON writes the document's shape back (tests and the simulator).
func (p Pool) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name            string `json:"name"`
		MachineType     string `json:"machineType"`
		DesiredReplicas *int64 `json:"desiredReplicas"`
	}{p.Name, p.MachineType, p.DesiredReplicas})
}

// Execution is the server's authorization, per capability. A missing key is
// false, and nothing in the cluster can turn one on.
type Execution struct {
	Scaling  bool `json:"scaling"`
	Upgrades bool `json:"upgrades"`
	Healing  bool `json:"healing"`
}

// Healing is the self-healing policy. A missing block (older servers) is all
// zeros: disabled, and maxUnhealthy 0 would never remediate anyway.
type Healing struct {
	Enabled bool `json:"enabled"`
	// MaxUnhealthy is the storm-brake threshold and the concurrent-disruption
	// budget; 0 means never remediate.
	MaxUnhealthy              int   `json:"maxUnhealthy"`
	NodeStartupTimeoutSeconds int64 `json:"nodeStartupTimeoutSeconds"`
	UnhealthyAfterSeconds     int64 `json:"unhealthyAfterSeconds"`
	CooldownSeconds           int64 `json:"cooldownSeconds"`
}

// Decode parses and validates a 2xx body. Keys match exactly; unknown keys
// (a differently cased known key among them) are ignored, and a key repeated
// in any object rejects the document. An empty
// body (a 204, say), anything but one JSON object, a field of the wrong type
// and any Validate failure are errors: the caller must neither cache the
// ETag nor act.
func Decode(body []byte) (Document, error) {
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(body) > MaxBytes:
		return Document{}, fmt.Errorf("desired state: body of %d bytes exceeds %d", len(body), MaxBytes)
	case len(trimmed) == 0:
		return Document{}, errors.New("desired state: empty body")
	case trimmed[0] != '{':
		// Unmarshal would accept null as "no change" and leave a zero document.
		return Document{}, errors.New("desired state: not a JSON object")
	}
	var d Document
	if err := decodeExact(trimmed, &d); err != nil {
		return Document{}, fmt.Errorf("desired state: decode: %w", err)
	}
	if err := noDuplicateKeys(trimmed); err != nil {
		return Document{}, fmt.Errorf("desired state: %w", err)
	}
	if d.KubernetesVersion != nil {
		if v := strings.TrimSpace(*d.KubernetesVersion); v != "" {
			d.KubernetesVersion = &v
		} else {
			d.KubernetesVersion = nil
		}
	}
	if err := d.Validate(); err != nil {
		return Document{}, err
	}
	return d, nil
}

// Validate applies docs/contract.md#desired-validation and names every
// violation at once.
func (d Document) Validate() error {
	var bad []string
	if d.Revision < 0 {
		bad = append(bad, fmt.Sprintf("revision %d is negative", d.Revision))
	}
	h := d.Healing
	if h.MaxUnhealthy < 0 || h.MaxUnhealthy > MaxUnhealthyLimit {
		bad = append(bad, fmt.Sprintf("healing.maxUnhealthy %d is outside 0..%d", h.MaxUnhealthy, MaxUnhealthyLimit))
	}
	for _, s := range []struct {
		name  string
		value int64
	}{
		{"nodeStartupTimeoutSeconds", h.NodeStartupTimeoutSeconds},
		{"unhealthyAfterSeconds", h.UnhealthyAfterSeconds},
		{"cooldownSeconds", h.CooldownSeconds},
	} {
		if s.value < 0 || s.value > MaxSecondsLimit {
			bad = append(bad, fmt.Sprintf("healing.%s %d is outside 0..%d", s.name, s.value, MaxSecondsLimit))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("desired state rejected: %s", strings.Join(bad, "; "))
	}
	return nil
}

// HealingArmed is the one healing switch: the server's authorization and
// the policy must both say yes.
func (d Document) HealingArmed() bool { return d.Execution.Healing && d.Healing.Enabled }

// LogValue is the line logged on every 200
// (docs/contract.md#desired-validation): what the document authorizes, without
// the pool list.
func (d Document) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int64("revision", d.Revision),
		slog.Int("pools", len(d.WorkerPools)),
		slog.Bool("scaling", d.Execution.Scaling),
		slog.Bool("upgrades", d.Execution.Upgrades),
		slog.Bool("healing", d.HealingArmed()),
		slog.Int("maxUnhealthy", d.Healing.MaxUnhealthy),
		slog.Int64("unhealthyAfterSeconds", d.Healing.UnhealthyAfterSeconds),
		slog.Int64("cooldownSeconds", d.Healing.CooldownSeconds),
	)
}

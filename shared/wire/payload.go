// Package wire holds the schema-2 heartbeat payload exactly as the platform
// reads it, and the cap pass that keeps every beat inside the platform's bounds.
package wire

// Schema is the payload schema this agent speaks. A beat without the key is
// read by the platform as schema 1 (the bash CronJob).
const Schema = 2

// ModeOperator is agent.mode for this agent; the bash CronJob sends "cronjob".
const ModeOperator = "operator"

// Node status values.
const (
	NodeReady    = "Ready"
	NodeNotReady = "NotReady"
	NodeUnknown  = "Unknown"
)

// Action types and statuses. Any other value makes the platform reject the
// whole beat with 400.
const (
	ActionScale   = "scale"
	ActionUpgrade = "upgrade"
	ActionHeal    = "heal"

	StatusPending    = "pending"
	StatusInProgress = "in-progress"
	StatusDone       = "done"
	StatusFailed     = "failed"
)

// Payload is one full snapshot of the cluster. Every beat carries the whole
// snapshot; the platform keeps the latest.
type Payload struct {
	Schema        int            `json:"schema"`
	ClusterID     string         `json:"clusterId"`
	Timestamp     string         `json:"timestamp"`
	Agent         Agent          `json:"agent"`
	Kubernetes    Kubernetes     `json:"kubernetes"`
	Nodes         []Node         `json:"nodes"` // never null: the platform 400s on null
	Components    []Component    `json:"components,omitempty"`
	Workloads     Workloads      `json:"workloads"`
	Events        []Event        `json:"events,omitempty"`
	Actions       []Action       `json:"actions,omitempty"`       // absent = platform clears its copy
	MachineIssues []MachineIssue `json:"machineIssues,omitempty"` // absent = platform clears its copy
	Inventory     *Inventory     `json:"inventory,omitempty"`
	Pools         []Pool         `json:"pools,omitempty"`
	Certificates  *Certificates  `json:"certificates,omitempty"`
}

// Agent identifies the sender.
type Agent struct {
	Version string `json:"version"`
	Mode    string `json:"mode"`
}

// Kubernetes carries the apiserver's own gitVersion, "" until discovery answers.
type Kubernetes struct {
	Version string `json:"version"`
}

// Node is the per-node view, derived from the typed Node object only.
type Node struct {
	Name           string    `json:"name"`
	Status         string    `json:"status"`
	Ready          bool      `json:"ready"`
	Roles          string    `json:"roles"`
	InstanceType   string    `json:"instanceType,omitempty"`
	KubeletVersion string    `json:"kubeletVersion,omitempty"`
	Capacity       *Capacity `json:"capacity,omitempty"`
}

// Capacity holds canonical Quantity strings; each key is omitted when unknown.
type Capacity struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Component is one control-plane component's health.
type Component struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Workloads summarizes pods; pod names and specs never leave the cluster.
type Workloads struct {
	Pods Pods `json:"pods"`
}

// Pods counts pods by phase. All six counters are always present.
type Pods struct {
	Total       int            `json:"total"`
	Running     int            `json:"running"`
	Pending     int            `json:"pending"`
	Failed      int            `json:"failed"`
	Succeeded   int            `json:"succeeded"`
	Unknown     int            `json:"unknown"`
	ByNamespace map[string]int `json:"byNamespace,omitempty"` // only with KUBEHZ_REPORT_NAMESPACES
}

// Event is one recent Warning event. Namespace and Note are privacy-gated.
type Event struct {
	Reason    string `json:"reason"`
	Kind      string `json:"kind"`
	Count     int32  `json:"count"`
	LastSeen  string `json:"lastSeen"`
	Namespace string `json:"namespace,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Action is one desired-state progress report.
type Action struct {
	Type     string `json:"type"`
	Target   string `json:"target"`
	Status   string `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Revision int64  `json:"revision"`
}

// MachineIssue is one machine-controller failure.
type MachineIssue struct {
	Pool    string `json:"pool"`
	Machine string `json:"machine,omitempty"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	Since   string `json:"since,omitempty"`
}

// Inventory mirrors the lok8s ClusterInventory spec field for field.
type Inventory struct {
	Lok8sVersion      string  `json:"lok8sVersion"`
	Kind              string  `json:"kind"`
	Provider          string  `json:"provider,omitempty"`
	KubernetesVersion string  `json:"kubernetesVersion,omitempty"`
	SpecHash          string  `json:"specHash"`
	RenderedAt        string  `json:"renderedAt"`
	Addons            []Addon `json:"addons,omitempty"`
}

// Addon is one entry of the inventory's addon list.
type Addon struct {
	Name         string `json:"name"`
	ChartVersion string `json:"chartVersion,omitempty"`
	AppVersion   string `json:"appVersion,omitempty"`
	Category     string `json:"category,omitempty"`
	Source       string `json:"source,omitempty"`
}

// Pool is the observed state of one MachineDeployment.
type Pool struct {
	Name        string `json:"name"`
	MachineType string `json:"machineType,omitempty"`
	Replicas    int    `json:"replicas"`
	Ready       int    `json:"ready"`
	APIGroup    string `json:"apiGroup,omitempty"`
}

// Certificates carries the earliest certificate expiry the observer can see.
type Certificates struct {
	ExpiresAt string `json:"expiresAt,omitempty"`
}

// AvailableUpdate is one entry of the platform's addon verdict, in the
// heartbeat response and in the ClusterInventory status alike.
type AvailableUpdate struct {
	Name    string `json:"name"`
	Current string `json:"current,omitempty"`
	Latest  string `json:"latest,omitempty"`
}

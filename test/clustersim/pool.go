package clustersim

import (
	"context"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PoolOptions shape the MachineDeployment CreatePool writes. Zero values
// take the defaults.
type PoolOptions struct {
	Kubelet     string            // spec.template.spec.versions.kubelet; default Options.Kubelet
	ServerType  string            // providerSpec serverType, the Nodes' instance type; default cpx31
	Labels      map[string]string // MachineDeployment metadata.labels
	Annotations map[string]string // MachineDeployment metadata.annotations, e.g. the autoscaler's
	NodeLabels  map[string]string // spec.template.spec.metadata.labels: on each Machine's spec and its Node
	Strategy    map[string]any    // spec.strategy; nil leaves machine-controller's default (maxSurge 1, maxUnavailable 0)
}

// CreatePool creates, as the test's admin and not as the simulator, the
// MachineDeployment name with replicas, selecting its Machines by the pool
// label, on the simulated cloud (machine-controller's "fake" provider,
// which the tests' build replaces with it). machine-controller's webhook
// defaults and validates it; the controller does the rest.
func (s *Sim) CreatePool(ctx context.Context, name string, replicas int64, opts PoolOptions) error {
	if opts.Kubelet == "" {
		opts.Kubelet = s.opts.Kubelet
	}
	if opts.ServerType == "" {
		opts.ServerType = defaultServerType
	}
	selector := map[string]any{PoolLabel: name}
	// The pool label reaches the Nodes too, through the Machines' spec
	// labels, as a KubeOne worker pool's own label does.
	nodeLabels := map[string]any{PoolLabel: name}
	for k, v := range opts.NodeLabels {
		nodeLabels[k] = v
	}
	md := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       "MachineDeployment",
		"metadata":   map[string]any{"name": name, "namespace": s.opts.Namespace},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": selector},
			"template": map[string]any{
				"metadata": map[string]any{"labels": maps.Clone(selector)},
				"spec": map[string]any{
					"metadata": map[string]any{"labels": nodeLabels},
					"versions": map[string]any{"kubelet": opts.Kubelet},
					"providerSpec": map[string]any{"value": map[string]any{
						"cloudProvider":     "fake",
						"operatingSystem":   "ubuntu",
						"cloudProviderSpec": map[string]any{"serverType": opts.ServerType},
					}},
				},
			},
		},
	}}
	if opts.Strategy != nil {
		md.Object["spec"].(map[string]any)["strategy"] = opts.Strategy
	}
	md.SetLabels(opts.Labels)
	md.SetAnnotations(opts.Annotations)
	if _, err := s.admin.Resource(MachineDeploymentsGVR).Namespace(s.opts.Namespace).Create(ctx, md, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create MachineDeployment %s/%s: %w", s.opts.Namespace, name, err)
	}
	s.log.Info("Created MachineDeployment", "machineDeployment", s.opts.Namespace+"/"+name, "replicas", replicas)
	return nil
}

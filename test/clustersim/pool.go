package clustersim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
)

// PoolOptions shape the MachineDeployment CreatePool writes. Zero values
// take the defaults.
type PoolOptions struct {
	Kubelet     string            // spec.template.spec.versions.kubelet; default Options.Kubelet
	ServerType  string            // providerSpec serverType, the Nodes' instance type; default cpx31
	Labels      map[string]string // MachineDeployment metadata.labels
	Annotations map[string]string // MachineDeployment metadata.annotations, e.g. the autoscaler's
	NodeLabels  map[string]string // spec.template.spec.metadata.labels: on each Machine's spec and its Node
}

const defaultServerType = "cpx31"

// CreatePool creates the MachineDeployment name with replicas, selecting
// its Machines by the pool label. Run does the rest.
func (s *Sim) CreatePool(ctx context.Context, name string, replicas int64, opts PoolOptions) error {
	if opts.Kubelet == "" {
		opts.Kubelet = s.opts.Kubelet
	}
	if opts.ServerType == "" {
		opts.ServerType = defaultServerType
	}
	selector := map[string]any{PoolLabel: name}
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
					"metadata": map[string]any{"labels": stringMap(opts.NodeLabels)},
					"versions": map[string]any{"kubelet": opts.Kubelet},
					"providerSpec": map[string]any{"value": map[string]any{
						"cloudProvider":     "hetzner",
						"cloudProviderSpec": map[string]any{"serverType": opts.ServerType},
					}},
				},
			},
		},
	}}
	md.SetLabels(opts.Labels)
	md.SetAnnotations(opts.Annotations)
	if _, err := s.dyn.Resource(MachineDeploymentsGVR).Namespace(s.opts.Namespace).Create(ctx, md, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create MachineDeployment %s/%s: %w", s.opts.Namespace, name, err)
	}
	s.log.Info("Created MachineDeployment", "machineDeployment", s.opts.Namespace+"/"+name, "replicas", replicas)
	return nil
}

// syncPool keeps one MachineDeployment's MachineSet, Machines, Nodes and
// status in line with its spec, rolling Machines whose kubelet differs from
// the template's.
func (s *Sim) syncPool(ctx context.Context, w *world, md *unstructured.Unstructured) error {
	set, err := s.ensureMachineSet(ctx, w, md)
	if err != nil {
		return err
	}
	var active []*unstructured.Unstructured
	var members []member
	kubelet := s.templateKubelet(md)
	for _, m := range w.machines {
		if !ownedBy(m, set.GetName()) || m.GetDeletionTimestamp() != nil {
			continue
		}
		active = append(active, m)
		node, joined := w.nodes[nodeRefName(m)]
		members = append(members, member{
			name: m.GetName(), created: s.createdAt(m),
			current: sameVersion(machineKubelet(m), kubelet),
			ready:   joined && isReady(node),
		})
	}
	step := decide(replicasOf(md), members)
	if step.roll && step.create > 0 {
		s.log.Info("Rolling pool", "machineDeployment", objectKey(md), "kubelet", kubelet)
	}
	for range step.create {
		m, err := s.createMachine(ctx, md, set)
		if err != nil {
			return err
		}
		active = append(active, m)
	}
	for _, name := range step.remove {
		i := slices.IndexFunc(active, func(m *unstructured.Unstructured) bool { return m.GetName() == name })
		m := active[i]
		if step.roll {
			s.log.Info("Rolling Machine", "machine", objectKey(m), "from", machineKubelet(m), "to", kubelet)
		}
		if err := s.deleteMachine(ctx, m); err != nil {
			return err
		}
		active = slices.Delete(active, i, i+1)
	}
	var errs []error
	for _, m := range active {
		if err := s.join(ctx, w, md.GetName(), m); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.writeStatus(ctx, w, md, set, active))
	return errors.Join(errs...)
}

// ensureMachineSet creates or updates the MachineSet <md>-<hash> so its
// spec mirrors the MachineDeployment's: Machines point at it, and the
// agent's owner-reference fallback strips the hash to find the pool.
func (s *Sim) ensureMachineSet(ctx context.Context, w *world, md *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	spec := map[string]any{}
	for _, field := range []string{"replicas", "selector", "template"} {
		if v, ok := md.Object["spec"].(map[string]any)[field]; ok {
			spec[field] = deepCopy(v)
		}
	}
	ri := s.dyn.Resource(MachineSetsGVR).Namespace(md.GetNamespace())
	name := machineSetName(md)
	if set, ok := w.sets[name]; ok {
		if equality.Semantic.DeepEqual(set.Object["spec"], spec) {
			return set, nil
		}
		set = set.DeepCopy()
		set.Object["spec"] = spec
		updated, err := ri.Update(ctx, set, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("update MachineSet %s: %w", name, err)
		}
		s.log.Info("Updated MachineSet", "machineSet", objectKey(updated), "replicas", replicasOf(updated))
		w.sets[name] = updated
		return updated, nil
	}
	set := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       "MachineSet",
		"metadata":   map[string]any{"name": name, "namespace": md.GetNamespace(), "labels": stringMap(md.GetLabels())},
		"spec":       spec,
	}}
	set.SetOwnerReferences([]metav1.OwnerReference{controllerRef(md)})
	created, err := ri.Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create MachineSet %s: %w", name, err)
	}
	s.log.Info("Created MachineSet", "machineSet", md.GetNamespace()+"/"+name)
	w.sets[name] = created
	return created, nil
}

// machineSetName is <md>-<hash of the MD's UID>, the shape machine-controller
// gives MachineSets; a recreated MD gets a fresh one.
func machineSetName(md *unstructured.Unstructured) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(md.GetUID()))
	return md.GetName() + "-" + rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

func controllerRef(owner *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// replicasOf reads spec.replicas as an int, float or absent (then 1, the
// MachineDeployment default); negative counts as 0.
func replicasOf(obj *unstructured.Unstructured) int {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
	if !ok {
		return 1
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int:
		n = int64(x)
	case float64:
		n = int64(x)
	}
	return int(max(n, 0))
}

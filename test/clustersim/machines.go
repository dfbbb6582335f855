package clustersim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

func (s *Sim) machinesAPI() dynamic.ResourceInterface {
	return s.dyn.Resource(MachinesGVR).Namespace(s.opts.Namespace)
}

// createMachine creates one Machine <md>-<random5> from the template,
// owned by set and carrying the finalizer that removes its Node on delete.
// While the pool is told to fail creates, its status gets the error.
func (s *Sim) createMachine(ctx context.Context, md, set *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	labels, _, _ := unstructured.NestedStringMap(md.Object, "spec", "template", "metadata", "labels")
	nodeLabels, _, _ := unstructured.NestedStringMap(md.Object, "spec", "template", "spec", "metadata", "labels")
	kubelet := s.templateKubelet(md)
	spec := map[string]any{
		"metadata": map[string]any{"labels": stringMap(nodeLabels)},
		"versions": map[string]any{"kubelet": kubelet},
	}
	if provider, ok, _ := unstructured.NestedFieldCopy(md.Object, "spec", "template", "spec", "providerSpec"); ok {
		spec["providerSpec"] = provider
	}
	m := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion,
		"kind":       "Machine",
		"metadata":   map[string]any{"generateName": md.GetName() + "-", "namespace": md.GetNamespace()},
		"spec":       spec,
	}}
	m.SetLabels(labels)
	m.SetFinalizers([]string{Finalizer})
	m.SetOwnerReferences([]metav1.OwnerReference{controllerRef(set)})
	created, err := s.machinesAPI().Create(ctx, m, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create Machine for %s: %w", md.GetName(), err)
	}
	fail := s.failureFor(md.GetName())
	s.remember(created.GetUID(), birth{at: time.Now(), fail: fail})
	s.log.Info("Created Machine", "machine", objectKey(created), "kubelet", kubelet, "failing", fail != nil)
	if fail != nil {
		return s.markFailed(ctx, created, *fail)
	}
	return created, nil
}

// markFailed writes the terminal error into the Machine's status.
func (s *Sim) markFailed(ctx context.Context, m *unstructured.Unstructured, f failure) (*unstructured.Unstructured, error) {
	m = m.DeepCopy()
	if err := unstructured.SetNestedField(m.Object, f.reason, "status", "errorReason"); err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(m.Object, f.message, "status", "errorMessage"); err != nil {
		return nil, err
	}
	updated, err := s.machinesAPI().UpdateStatus(ctx, m, metav1.UpdateOptions{})
	if err := quiet(err); err != nil {
		return m, fmt.Errorf("set errorReason on Machine %s: %w", m.GetName(), err)
	}
	if err != nil {
		return m, nil // a later pass retries from what the simulator remembers
	}
	return updated, nil
}

// createdAt is when the Machine was created: the simulator's own
// nanosecond record where it has one, else the creationTimestamp.
func (s *Sim) createdAt(m *unstructured.Unstructured) time.Time {
	if b, ok := s.recall(m.GetUID()); ok {
		return b.at
	}
	return m.GetCreationTimestamp().Time
}

// deleteMachine asks for the Machine's deletion; its finalizer then takes
// the Node down first.
func (s *Sim) deleteMachine(ctx context.Context, m *unstructured.Unstructured) error {
	if err := quiet(s.machinesAPI().Delete(ctx, m.GetName(), metav1.DeleteOptions{})); err != nil {
		return fmt.Errorf("delete Machine %s: %w", m.GetName(), err)
	}
	s.log.Info("Deleted Machine", "machine", objectKey(m))
	return nil
}

// finalizeDeleting drains, then removes the Node of every deleting Machine
// that carries the simulator's finalizer, then the finalizer, unless its
// pool is stalled. A drain never blocks the pass: it evicts, and a later
// pass finds the Node empty.
func (s *Sim) finalizeDeleting(ctx context.Context, w *world) error {
	var errs []error
	for _, m := range w.machines {
		if m.GetDeletionTimestamp() == nil || !slices.Contains(m.GetFinalizers(), Finalizer) || s.isStalled(poolOf(m)) {
			continue
		}
		node := nodeRefName(m)
		if node == "" {
			node = m.GetName() // it may have joined a moment before the delete
		}
		if pods := w.pods[node]; len(pods) > 0 {
			errs = append(errs, s.evict(ctx, node, pods))
			continue
		}
		if err := quiet(s.kube.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})); err != nil {
			errs = append(errs, fmt.Errorf("delete Node %s of Machine %s: %w", node, m.GetName(), err))
			continue
		}
		m = m.DeepCopy()
		m.SetFinalizers(slices.DeleteFunc(m.GetFinalizers(), func(f string) bool { return f == Finalizer }))
		if _, err := s.machinesAPI().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			errs = append(errs, quiet(err))
			continue
		}
		s.log.Info("Released Machine", "machine", objectKey(m), "node", node)
	}
	return errors.Join(errs...)
}

// ownedBy reports whether m points at the MachineSet named set.
func ownedBy(m *unstructured.Unstructured, set string) bool {
	for _, ref := range m.GetOwnerReferences() {
		if ref.Kind == "MachineSet" && ref.Name == set {
			return true
		}
	}
	return false
}

// poolOf is the pool a Machine's MachineSet owner names, its last
// "-segment" stripped, as the agent's owner-reference fallback does.
func poolOf(m *unstructured.Unstructured) string {
	for _, ref := range m.GetOwnerReferences() {
		if ref.Kind != "MachineSet" {
			continue
		}
		if i := strings.LastIndex(ref.Name, "-"); i > 0 {
			return ref.Name[:i]
		}
	}
	return ""
}

func nodeRefName(m *unstructured.Unstructured) string {
	name, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
	return name
}

func objectKey(obj metav1.Object) string { return obj.GetNamespace() + "/" + obj.GetName() }

// stringMap turns labels into an unstructured map, never nil, so the
// apiserver stores an empty object rather than pruning a null.
func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func deepCopy(v any) any { return runtime.DeepCopyJSONValue(v) }

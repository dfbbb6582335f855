package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
)

// machine-controller's objects, in the MD namespace the agent defaults to,
// shaped as test/clustersim writes them: a MachineDeployment per pool
// selecting its Machines by the pool label, a MachineSet <pool>-<hash> it
// controls, and Machines the MachineSet controls, each naming its Node in
// status.nodeRef.
const mdNamespace = "kube-system"

// optionalCRDs are machine-controller's three CRDs and lok8s'.
func optionalCRDs() []string { return []string{kube.MachineCRDs, kube.InventoryCRD} }

func installCRDs() error {
	_, err := harness.env.InstallCRDs(optionalCRDs()...)
	return err
}

// awaitCRDsServed waits until the apiserver lists every optional CRD's
// objects again, as it does some seconds after a restart.
func awaitCRDsServed(ctx context.Context) error {
	gvrs := []schema.GroupVersionResource{clustersim.MachineDeploymentsGVR, clustersim.MachineSetsGVR, clustersim.MachinesGVR,
		{Group: "lok8s.dev", Version: "v1alpha1", Resource: "clusterinventories"}}
	for _, gvr := range gvrs {
		for {
			_, err := harness.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not served after the restart: %w", gvr, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// providerSpec is a Hetzner worker as machine-controller's templates carry it.
func providerSpec() map[string]any {
	return map[string]any{"value": map[string]any{
		"cloudProvider": "hetzner",
		"cloudProviderSpec": map[string]any{
			"serverType": "cpx31", "location": "fsn1", "image": "ubuntu-24.04",
			"networks": []any{"kubehz-net"}, "firewall": "kubehz-workers",
			"labels": map[string]any{"kubehz.dev/cluster": "bench"},
		},
		"operatingSystem":     "ubuntu",
		"operatingSystemSpec": map[string]any{"distUpgradeOnBoot": false},
		"sshPublicKeys":       []any{"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKubehzBenchKeyForScaleHarnessOnly ops@example.net"},
	}}
}

// template is the Machine template of pool p, shared by its
// MachineDeployment and MachineSet.
func template(p int) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"labels": map[string]any{clustersim.PoolLabel: poolName(p)}},
		"spec": map[string]any{
			"metadata":     map[string]any{"labels": map[string]any{"workerset": poolName(p), "node-role.kubernetes.io/worker": ""}},
			"versions":     map[string]any{"kubelet": strings.TrimPrefix(kubelet, "v")},
			"providerSpec": providerSpec(),
		},
	}
}

// applyPool writes pool p's MachineDeployment and MachineSet at the replicas
// the cluster's nodes give it, with the status machine-controller reports
// for a pool whose every Machine is Ready.
func applyPool(ctx context.Context, t *tally, p, nodes int) error {
	replicas := int64(poolReplicas(p, nodes))
	selector := map[string]any{"matchLabels": map[string]any{clustersim.PoolLabel: poolName(p)}}
	md := object("MachineDeployment", poolName(p), map[string]any{
		"replicas": replicas, "selector": selector, "template": template(p),
		"strategy":             map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": int64(1), "maxUnavailable": int64(0)}},
		"revisionHistoryLimit": int64(1), "progressDeadlineSeconds": int64(600),
	})
	md.SetAnnotations(map[string]string{"machinedeployment.clusters.k8s.io/revision": "1"})
	mds := harness.dyn.Resource(clustersim.MachineDeploymentsGVR).Namespace(mdNamespace)
	applied, err := apply(ctx, mds, md, replicas)
	if err != nil {
		return err
	}
	ms := object("MachineSet", machineSetName(p), map[string]any{"replicas": replicas, "selector": selector, "template": template(p)})
	ms.SetOwnerReferences([]metav1.OwnerReference{controllerRef(applied)})
	if _, err := apply(ctx, harness.dyn.Resource(clustersim.MachineSetsGVR).Namespace(mdNamespace), ms, replicas); err != nil {
		return err
	}
	t.created(2) // the MachineDeployment: apply and status
	t.created(2) // the MachineSet
	return nil
}

func object(kind, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": mdNamespace},
		"spec":     spec,
	}}
}

// apply server-side-applies obj, then its status: every replica Ready.
func apply(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	opts := metav1.ApplyOptions{FieldManager: "kubehz-bench", Force: true}
	applied, err := ri.Apply(ctx, obj.GetName(), obj, opts)
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	status := object(obj.GetKind(), obj.GetName(), nil)
	delete(status.Object, "spec")
	status.Object["status"] = map[string]any{
		"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas,
		"unavailableReplicas": int64(0), "observedGeneration": applied.GetGeneration(),
	}
	if _, err := ri.ApplyStatus(ctx, obj.GetName(), status, opts); err != nil {
		return nil, fmt.Errorf("apply status of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return applied, nil
}

func controllerRef(owner *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(),
		UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
}

// machineLinks is what Machines point at: their pool's MachineSet (owner)
// and their Node (status.nodeRef), by name.
type machineLinks struct {
	sets  map[string]metav1.OwnerReference
	nodes map[string]*corev1.Node
}

// linksFor reads them all once rather than twice per Machine.
func linksFor(ctx context.Context) (machineLinks, error) {
	l := machineLinks{sets: map[string]metav1.OwnerReference{}, nodes: map[string]*corev1.Node{}}
	sets, err := harness.dyn.Resource(clustersim.MachineSetsGVR).Namespace(mdNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return l, err
	}
	for _, ms := range sets.Items {
		l.sets[ms.GetName()] = controllerRef(&ms)
	}
	nodes, err := harness.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return l, err
	}
	for i := range nodes.Items {
		l.nodes[nodes.Items[i].Name] = &nodes.Items[i]
	}
	return l, nil
}

// createMachine creates the Machine behind node i, owned by its pool's
// MachineSet, and links it to the Node the way machine-controller does once
// the kubelet joined: status.nodeRef.
func createMachine(ctx context.Context, t *tally, links machineLinks, i int) error {
	p := i / poolSize
	owner, ok := links.sets[machineSetName(p)]
	node := links.nodes[nodeName(i)]
	if !ok || node == nil {
		return fmt.Errorf("machine %d: no MachineSet %s or Node %s", i, machineSetName(p), nodeName(i))
	}
	spec, _, _ := unstructured.NestedMap(template(p), "spec")
	m := object("Machine", nodeName(i), spec)
	m.SetLabels(map[string]string{clustersim.PoolLabel: poolName(p)})
	m.SetAnnotations(map[string]string{"machine-controller/host-id": fmt.Sprintf("%d", 40_000_000+i)})
	m.SetFinalizers([]string{"machine-controller.kubermatic.io/delete-node", "machine-controller.kubermatic.io/delete-instance"})
	m.SetOwnerReferences([]metav1.OwnerReference{owner})
	machines := harness.dyn.Resource(clustersim.MachinesGVR).Namespace(mdNamespace)
	created, err := machines.Create(ctx, m, metav1.CreateOptions{})
	if exists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ref := map[string]any{"apiVersion": "v1", "kind": "Node", "name": node.Name, "uid": string(node.UID)}
	if err := unstructured.SetNestedMap(created.Object, ref, "status", "nodeRef"); err != nil {
		return err
	}
	var addresses []any
	for _, a := range node.Status.Addresses {
		addresses = append(addresses, map[string]any{"type": string(a.Type), "address": a.Address})
	}
	if err := unstructured.SetNestedSlice(created.Object, addresses, "status", "addresses"); err != nil {
		return err
	}
	// machine-controller's Machine CRD has no status subresource: the
	// controller writes a Machine's status with a plain update.
	if _, err := machines.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		return err
	}
	t.created(2)
	return nil
}

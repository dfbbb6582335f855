package kube

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// machineResources are machine-controller's three kinds, in the order
// RemoveMachines clears them.
var machineResources = []schema.GroupVersionResource{
	{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinedeployments"},
	{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machinesets"},
	{Group: "cluster.k8s.io", Version: "v1alpha1", Resource: "machines"},
}

// RemoveMachines deletes every MachineDeployment, MachineSet and Machine in
// namespace, releasing their finalizers first: run once the controllers
// are stopped, nothing else would release them.
func (e *Env) RemoveMachines(ctx context.Context, namespace string) error {
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	var errs []error
	for _, gvr := range machineResources {
		ri := dyn.Resource(gvr).Namespace(namespace)
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, obj := range list.Items {
			if len(obj.GetFinalizers()) > 0 {
				obj.SetFinalizers(nil)
				if _, err := ri.Update(ctx, &obj, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, err)
				}
			}
		}
		if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

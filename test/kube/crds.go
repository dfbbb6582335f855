package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// InventoryCRD is lok8s' ClusterInventory CRD in test/crds, written from
// the contract (lok8s publishes none that this repository may copy).
const InventoryCRD = "lok8s.dev_clusterinventories.yaml"

// MachineCRDs is the file of machine-controller's own three CRDs, which the
// observer reads and the actor scales, heals and upgrades through, as
// hack/machinecontroller.sh keeps it beside the controller it builds.
const MachineCRDs = "machine-crds.yaml"

// InstallCRDs creates the CRDs named by file and waits until they are
// served: MachineCRDs from the machine-controller build, any other from
// test/crds.
func (e *Env) InstallCRDs(names ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths := make([]string, len(names))
	for i, name := range names {
		paths[i] = filepath.Join(e.Root, "test", "crds", name)
		if name == MachineCRDs {
			dir, err := MachineControllerAssets(e.Root)
			if err != nil {
				return nil, err
			}
			paths[i] = filepath.Join(dir, name)
		}
	}
	return envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: paths, MaxTime: time.Minute})
}

// UninstallCRDs deletes the CRDs and waits until they are gone, so a test can
// prove the observer copes with a CRD disappearing.
func (e *Env) UninstallCRDs(crds []*apiextensionsv1.CustomResourceDefinition) error {
	if err := envtest.UninstallCRDs(e.Config, envtest.CRDInstallOptions{CRDs: crds, MaxTime: time.Minute}); err != nil {
		return err
	}
	// The delete returns while the CRD is still terminating (its objects
	// are being removed); installing it again before it is gone would never
	// be served. Wait until every CRD is really gone.
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, crd := range crds {
		for {
			_, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("CRD %s still present after a minute", crd.Name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// StopEtcd stops this control plane's etcd, leaving the apiserver up, so its
// readiness checks fail the way a real etcd outage makes them fail.
func (e *Env) StopEtcd() error { return e.env.ControlPlane.Etcd.Stop() }

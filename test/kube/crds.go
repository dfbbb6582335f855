package kube

import (
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// CRDPath is a test CRD in test/crds, written from the contract.
func (e *Env) CRDPath(name string) string { return filepath.Join(e.Root, "test", "crds", name) }

// InstallCRDs creates the CRDs in files and waits until they are served.
func (e *Env) InstallCRDs(files ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	return envtest.InstallCRDs(e.Config, envtest.CRDInstallOptions{Paths: files, MaxTime: time.Minute})
}

// UninstallCRDs deletes the CRDs and waits until they are gone, so a test can
// prove the observer copes with a CRD disappearing.
func (e *Env) UninstallCRDs(crds []*apiextensionsv1.CustomResourceDefinition) error {
	return envtest.UninstallCRDs(e.Config, envtest.CRDInstallOptions{CRDs: crds, MaxTime: time.Minute})
}

// StopEtcd stops this control plane's etcd, leaving the apiserver up, so its
// readiness checks fail the way a real etcd outage makes them fail.
func (e *Env) StopEtcd() error { return e.env.ControlPlane.Etcd.Stop() }

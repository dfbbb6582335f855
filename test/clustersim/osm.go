package clustersim

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What machine-controller reads of operating-system-manager before it
// creates a server: a Secret in cloudInitNamespace per MachineDeployment,
// named <deployment>-<namespace>-bootstrap-config, whose revision
// annotation must equal the revision of the creating Machine's MachineSet.
const (
	cloudInitNamespace = "cloud-init-settings"
	revisionAnnotation = "machinedeployment.clusters.k8s.io/revision"
	secretRevision     = "k8c.io/machine-deployment-revision"
)

// writeBootstrapSecrets keeps one bootstrap Secret per MachineDeployment at
// the deployment's current revision, as operating-system-manager does.
// Without it machine-controller creates no server at all.
func (s *Sim) writeBootstrapSecrets(ctx context.Context, w *world) error {
	secrets := s.kube.CoreV1().Secrets(cloudInitNamespace)
	var errs []error
	for _, md := range w.mds {
		revision := md.GetAnnotations()[revisionAnnotation]
		if revision == "" {
			continue // machine-controller has not numbered it yet
		}
		name := fmt.Sprintf("%s-%s-bootstrap-config", md.GetName(), md.GetNamespace())
		if w.secrets[name] == revision {
			continue
		}
		want := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cloudInitNamespace, Annotations: map[string]string{secretRevision: revision}},
			Data:       map[string][]byte{"cloud-config": []byte("#cloud-config\nhostname: <MACHINE_NAME>\n")},
		}
		_, err := secrets.Update(ctx, want, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = secrets.Create(ctx, want, metav1.CreateOptions{})
		}
		if err := quiet(err); err != nil {
			errs = append(errs, fmt.Errorf("bootstrap Secret %s: %w", name, err))
			continue
		}
		if err != nil {
			continue // a conflict with a concurrent write: the next pass retries
		}
		s.log.Info("Wrote bootstrap Secret", "machineDeployment", md.GetNamespace()+"/"+md.GetName(), "revision", revision)
	}
	return errors.Join(errs...)
}

// ensureCloudInitNamespace creates the namespace the bootstrap Secrets
// live in, once.
func (s *Sim) ensureCloudInitNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cloudInitNamespace}}
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", cloudInitNamespace, err)
	}
	return nil
}

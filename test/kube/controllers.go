package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The machine-controller the acting tests run, as hack/machinecontroller.sh
// builds it (a unit test keeps the two in step).
const MachineControllerVersion = "v1.65.0"

// MachineControllerAssetsEnv names a directory holding machine-controller,
// its webhook and their VERSION stamp; without it the harness runs
// hack/machinecontroller.sh, which builds or finds the cached copy.
const MachineControllerAssetsEnv = "KUBEHZ_TEST_MC_ASSETS"

// The identities the controllers and the simulated kubelets and cloud act
// under, so the audit log tells who wrote what. Each is in system:masters:
// the tests prove the agent's RBAC, not the controllers'.
const (
	KubeControllerManagerUser = "system:kube-controller-manager"
	MachineControllerUser     = "kubehz-test:machine-controller"
	WebhookUser               = "kubehz-test:machine-controller-webhook"
	SimulatorUser             = "kubehz-test:clustersim"
)

// machineControllerLease is the lease machine-controller's leader holds.
const machineControllerLease = "machine-controller"

// ControllerOptions tune the real controllers.
type ControllerOptions struct {
	// CloudDir is the simulated cloud's instance directory (see
	// test/tools/machine-controller/simcloud.patch).
	CloudDir string
	// JoinClusterTimeout is machine-controller's -join-cluster-timeout;
	// zero leaves it unset, as KubeOne deploys the controller.
	JoinClusterTimeout time.Duration
	// Log, if set, receives every controller's output as it is written.
	Log io.Writer
}

// Controllers are the real controllers of a cluster's machines, started for
// one test: kube-controller-manager (node lifecycle, taint-based eviction,
// garbage collection, ServiceAccounts) and kubermatic machine-controller
// with its admission webhook, registered with the apiserver by URL.
type Controllers struct {
	env                   *Env
	kcm, mc, webhook      *Process
	webhookConfigurations []string
}

// NodeMonitorGracePeriod is how long kube-controller-manager waits for a
// silent kubelet before it marks the Node Unknown and taints it (50 s by
// default; shorter here so a test sees a death in seconds, not minutes).
const NodeMonitorGracePeriod = 20 * time.Second

// StartControllers starts the real controllers against e, writing their
// credentials and certificates into dir, and returns once the webhook
// serves and machine-controller leads.
func (e *Env) StartControllers(ctx context.Context, dir string, opts ControllerOptions) (_ *Controllers, err error) {
	if opts.CloudDir == "" {
		return nil, errors.New("start controllers: no cloud directory")
	}
	mcAssets, err := MachineControllerAssets(e.Root)
	if err != nil {
		return nil, err
	}
	if err := checkKubeControllerManager(filepath.Join(e.assets, "kube-controller-manager")); err != nil {
		return nil, err
	}
	c := &Controllers{env: e}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	kubeconfig := func(user string) (string, error) {
		path := filepath.Join(dir, strings.ReplaceAll(user, ":", "_")+".kubeconfig")
		return path, e.WriteUserKubeconfig(user, path)
	}

	kcmConfig, err := kubeconfig(KubeControllerManagerUser)
	if err != nil {
		return nil, err
	}
	c.kcm, err = StartProcessTee(filepath.Join(e.assets, "kube-controller-manager"), nil, prefixed(opts.Log, "kcm: "),
		"--kubeconfig="+kcmConfig,
		"--controllers=node-lifecycle-controller,taint-eviction-controller,garbage-collector-controller,serviceaccount-controller",
		"--leader-elect=false",
		"--secure-port=0",
		"--node-monitor-period=2s",
		"--node-monitor-grace-period="+NodeMonitorGracePeriod.String(),
	)
	if err != nil {
		return nil, err
	}

	if err := c.startWebhook(ctx, dir, mcAssets, kubeconfig, opts); err != nil {
		return nil, err
	}

	mcConfig, err := kubeconfig(MachineControllerUser)
	if err != nil {
		return nil, err
	}
	args := []string{
		"-kubeconfig=" + mcConfig,
		"-worker-count=10",
		"-enable-leader-election=true",
		"-leader-election-namespace=kube-system",
		"-health-probe-address=127.0.0.1:0",
		"-metrics-address=127.0.0.1:0",
		"-node-csr-approver=false",
	}
	if opts.JoinClusterTimeout > 0 {
		args = append(args, "-join-cluster-timeout="+opts.JoinClusterTimeout.String())
	}
	// GOTRACEBACK=all: Stuck's SIGQUIT then prints every goroutine.
	c.mc, err = StartProcessTee(filepath.Join(mcAssets, "machine-controller"), []string{"KUBEHZ_SIMCLOUD_DIR=" + opts.CloudDir, "GOTRACEBACK=all"},
		prefixed(opts.Log, "machine-controller: "), args...)
	if err != nil {
		return nil, err
	}
	if err := c.awaitLeader(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// startWebhook serves machine-controller's admission webhook on a loopback
// port under a CA made for this run, and registers it for Machines and
// MachineDeployments as the controller's own manifests do.
func (c *Controllers) startWebhook(ctx context.Context, dir, mcAssets string, kubeconfig func(string) (string, error), opts ControllerOptions) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	ca, certFile, keyFile, err := writeServingCert(dir, "127.0.0.1")
	if err != nil {
		return err
	}
	config, err := kubeconfig(WebhookUser)
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// The webhook validates a spec through the same provider, which
	// checks that it has a cloud.
	c.webhook, err = StartProcessTee(filepath.Join(mcAssets, "webhook"), []string{"KUBEHZ_SIMCLOUD_DIR=" + opts.CloudDir}, prefixed(opts.Log, "webhook: "),
		"-kubeconfig="+config,
		"-listen-address="+addr,
		"-tls-cert-path="+certFile,
		"-tls-key-path="+keyFile,
		"-namespace=kube-system",
	)
	if err != nil {
		return err
	}
	if err := awaitDial(ctx, addr, c.webhook); err != nil {
		return fmt.Errorf("machine-controller webhook: %w\n%s", err, c.webhook.Output())
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	hook := func(resource string) admissionregistrationv1.MutatingWebhook {
		url := "https://" + addr + "/" + resource
		return admissionregistrationv1.MutatingWebhook{
			Name:                    resource + ".machine-controller.kubermatic.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{"cluster.k8s.io"}, APIVersions: []string{"v1alpha1"}, Resources: []string{resource},
				},
			}},
		}
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "machine-controller.kubermatic.io"},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{hook("machinedeployments"), hook("machines")},
	}
	if _, err := c.env.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("register machine-controller webhook: %w", err)
	}
	c.webhookConfigurations = append(c.webhookConfigurations, cfg.Name)
	return nil
}

// awaitLeader waits until machine-controller holds its lease: before that,
// it reconciles nothing.
func (c *Controllers) awaitLeader(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		l, err := c.env.Client.CoordinationV1().Leases("kube-system").Get(ctx, machineControllerLease, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			return nil
		}
		if c.mc.Exited() {
			return fmt.Errorf("machine-controller exited:\n%s", c.mc.Output())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("machine-controller did not take its lease: %w\n%s", ctx.Err(), c.mc.Output())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// MachineController is machine-controller's process, for a test that
// freezes it (SIGSTOP) to open the window a busy or restarting controller
// leaves between a write and its reaction.
func (c *Controllers) MachineController() *Process { return c.mc }

// Output is everything the controllers wrote, for a failing test's log.
func (c *Controllers) Output() string {
	var b strings.Builder
	for _, p := range []struct {
		name string
		p    *Process
	}{{"kube-controller-manager", c.kcm}, {"machine-controller", c.mc}, {"webhook", c.webhook}} {
		if p.p != nil {
			fmt.Fprintf(&b, "--- %s\n%s", p.name, p.p.Output())
		}
	}
	return b.String()
}

// Stuck is for a test that gave up waiting on machine-controller: it ends
// machine-controller with SIGQUIT and returns the stacks of the goroutines
// that were then in machine-controller's own code, such as a reconcile
// blocked on a call. Output keeps the whole dump.
func (c *Controllers) Stuck() string {
	if c.mc == nil {
		return "machine-controller never started"
	}
	if c.mc.Exited() {
		return "machine-controller had exited on its own"
	}
	c.mc.Quit(10 * time.Second)
	found := goroutinesIn(c.mc.Output(), "k8c.io/machine-controller/")
	if len(found) == 0 {
		return "machine-controller, quit: no goroutine was in its own code"
	}
	return fmt.Sprintf("machine-controller, quit: %d goroutines were in its own code:\n\n%s", len(found), strings.Join(found, "\n\n"))
}

// PostMortem is a failed test's account of the controllers: Stuck's
// goroutines after everything the controllers wrote.
func (c *Controllers) PostMortem() string {
	stuck := c.Stuck()
	return c.Output() + "\n" + stuck
}

// Stop unregisters the webhook and stops the controllers, machine-controller
// first so nothing reconciles against a half-stopped cluster, and removes
// its lease, so the next test's controller leads at once.
func (c *Controllers) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, name := range c.webhookConfigurations {
		err := c.env.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	for _, p := range []*Process{c.mc, c.webhook, c.kcm} {
		if p == nil || p.Exited() {
			continue
		}
		if _, err := p.Stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	err := c.env.Client.CoordinationV1().Leases("kube-system").Delete(ctx, machineControllerLease, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

package register

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/backoff"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeapi"
)

// Secrets is the register command's whole Kubernetes API: get and create in
// one namespace, exactly what its Role grants.
type Secrets interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*kubeapi.Secret, error)
	Create(ctx context.Context, s *kubeapi.Secret, opts metav1.CreateOptions) (*kubeapi.Secret, error)
}

// apiTimeout bounds each Secret call, so a slow apiserver fails the Job
// instead of holding it.
const apiTimeout = 10 * time.Second

// Deps are Run's seams.
type Deps struct {
	Secrets   Secrets
	Announcer Announcer
	Random    io.Reader      // crypto/rand.Reader outside tests
	Sleep     Sleeper        // nil: real time
	Jitter    func() float64 // backoff jitter in [0, 1); nil: random
	Log       *slog.Logger
}

// Run registers the cluster. The order makes a crash at any point safe: the
// Secret is stored before any hash leaves the cluster, so the platform never
// holds a hash whose token is lost, and a re-run finds the Secret and
// announces the same hashes again, which the platform accepts as a no-op.
func Run(ctx context.Context, cfg Settings, d Deps, stdout io.Writer) error {
	bind, err := ReadBind(cfg.BindFile)
	if err != nil {
		return err
	}
	id, err := ensureIdentity(ctx, d.Secrets, cfg, d.Random, d.Log)
	if err != nil {
		return err
	}
	body, err := json.Marshal(NewRequest(cfg.ClusterID, id, bind))
	if err != nil {
		return fmt.Errorf("encode registration: %w", err)
	}
	wait := d.Sleep
	if wait == nil {
		wait = sleep
	}
	b := backoff.New(backoff.Options{Base: retryBase, Max: retryMax, Jitter: d.Jitter})
	if err := announce(ctx, d.Announcer, body, bind, wait, b, d.Log); err != nil {
		return fmt.Errorf("announce the identity of cluster %s: %w", cfg.ClusterID,
			explain(err, cfg.ClusterID, cfg.Namespace, cfg.SecretName))
	}
	d.Log.InfoContext(ctx, "Registered the cluster with the platform", "cluster", cfg.ClusterID,
		"secret", cfg.Namespace+"/"+cfg.SecretName, "bindSecret", bind != "")
	_, err = fmt.Fprintf(stdout, "Cluster %s is registered. Its agent token and claim code are in Secret %s/%s.\n"+
		"Read the claim code (and paste it into the platform to claim the cluster) with:\n\n  %s\n",
		cfg.ClusterID, cfg.Namespace, cfg.SecretName, HowToRead(cfg.Namespace, cfg.SecretName))
	return err
}

// ensureIdentity returns the identity in the Secret, creating the Secret
// first when there is none. It never updates an existing one.
func ensureIdentity(ctx context.Context, secrets Secrets, cfg Settings, random io.Reader, log *slog.Logger) (Identity, error) {
	ref := cfg.Namespace + "/" + cfg.SecretName
	s, err := get(ctx, secrets, cfg.SecretName)
	if err == nil {
		log.InfoContext(ctx, "The identity Secret exists; announcing its hashes again", "secret", ref)
		return existing(s, ref)
	}
	if !apierrors.IsNotFound(err) {
		return Identity{}, fmt.Errorf("get Secret %s (grant get on it by name, as deploy/register does): %w", ref, err)
	}
	id, err := Generate(random)
	if err != nil {
		return Identity{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	_, err = secrets.Create(cctx, NewSecret(cfg.Namespace, cfg.SecretName, id), metav1.CreateOptions{})
	switch {
	case err == nil:
		log.InfoContext(ctx, "Created the identity Secret", "secret", ref)
		return id, nil
	case apierrors.IsAlreadyExists(err):
		// Another run (or lok8s) won the race: its identity is the one.
		s, err := get(ctx, secrets, cfg.SecretName)
		if err != nil {
			return Identity{}, fmt.Errorf("get Secret %s after losing the race to create it: %w", ref, err)
		}
		return existing(s, ref)
	}
	return Identity{}, fmt.Errorf("create Secret %s (grant create on secrets, as deploy/register does): %w", ref, err)
}

// existing reads an identity Secret; a malformed one is for a person to fix
// (exit 2), never for this command to overwrite.
func existing(s *kubeapi.Secret, ref string) (Identity, error) {
	id, err := FromSecret(s)
	if err != nil {
		return Identity{}, &config.Error{Problems: []config.Problem{{Var: "Secret " + ref, Reason: err.Error()}}}
	}
	return id, nil
}

func get(ctx context.Context, secrets Secrets, name string) (*kubeapi.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return secrets.Get(ctx, name, metav1.GetOptions{})
}

package register

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubehz.dev/agent/shared/kubeapi"
)

const (
	// fixedToken and fixedClaim are what Generate makes from fixedRandom;
	// the hashes are their SHA-256, computed outside Go.
	fixedToken     = "khz_agt_0000000000000000000000000000000000000000000000000000000000000000"
	fixedClaim     = "khzc_01010101010101010101010101010101"
	fixedTokenHash = "1c84788613d0f29cf5a4dca2ecc2c9e23a558f84eee38b2690a8303ca57a4bca"
	fixedClaimHash = "ba93d4125391f53e872611ff375eb15bfff95c20e7b514bae5631b055bebef3f"
)

// fixedRandom yields 32 zero bytes for the token, then 16 ones for the claim.
func fixedRandom() io.Reader {
	return bytes.NewReader(append(make([]byte, 32), bytes.Repeat([]byte{1}, 16)...))
}

var secretsGR = schema.GroupResource{Resource: "secrets"}

// fakeSecrets is one namespace's Secrets. getErr/createErr, when set,
// answer instead of the store; onCreate runs inside Create (to lose a race).
type fakeSecrets struct {
	mu        sync.Mutex
	ns        string
	store     map[string]*kubeapi.Secret
	getErr    map[string]error
	createErr error
	onCreate  func(f *fakeSecrets)
	creates   int
	gets      []string // names asked for, in order
}

var _ Secrets = (*fakeSecrets)(nil)

func newFakeSecrets(objs ...*kubeapi.Secret) *fakeSecrets {
	f := &fakeSecrets{ns: "kubehz-system", store: map[string]*kubeapi.Secret{}, getErr: map[string]error{}}
	for _, o := range objs {
		f.store[o.Name] = o.DeepCopy()
	}
	return f
}

func (f *fakeSecrets) Get(_ context.Context, name string, _ metav1.GetOptions) (*kubeapi.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets = append(f.gets, name)
	if err := f.getErr[name]; err != nil {
		return nil, err
	}
	s, ok := f.store[name]
	if !ok {
		return nil, apierrors.NewNotFound(secretsGR, name)
	}
	return s.DeepCopy(), nil
}

func (f *fakeSecrets) Create(_ context.Context, s *kubeapi.Secret, _ metav1.CreateOptions) (*kubeapi.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creates++
	if f.onCreate != nil {
		f.onCreate(f)
	}
	if f.createErr != nil {
		return nil, f.createErr
	}
	if _, ok := f.store[s.Name]; ok {
		return nil, apierrors.NewAlreadyExists(secretsGR, s.Name)
	}
	f.store[s.Name] = s.DeepCopy()
	return s.DeepCopy(), nil
}

func (f *fakeSecrets) secret(name string) *kubeapi.Secret {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.store[name]
}

// fakeAnnouncer answers from errs in turn (nil once they run out) and
// records every body; seen, when set, runs first (to check the Secret).
type fakeAnnouncer struct {
	errs   []error
	bodies [][]byte
	redact []string
	seen   func()
}

func (a *fakeAnnouncer) Register(_ context.Context, body []byte, redact string) error {
	if a.seen != nil {
		a.seen()
	}
	a.bodies = append(a.bodies, append([]byte(nil), body...))
	a.redact = append(a.redact, redact)
	if len(a.errs) == 0 {
		return nil
	}
	err := a.errs[0]
	a.errs = a.errs[1:]
	return err
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

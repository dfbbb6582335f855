package register

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/token"
)

func testConfig() Settings {
	return Settings{ClusterID: "demo.example.net", Namespace: "kubehz-system", SecretName: "kubehz-agent"}
}

// runOnce runs Run with fixed randomness and a clock that records waits.
func runOnce(t *testing.T, secrets *fakeSecrets, a *fakeAnnouncer) (string, []time.Duration, error) {
	t.Helper()
	return runWith(t, testConfig(), secrets, a)
}

func runWith(t *testing.T, cfg Settings, secrets *fakeSecrets, a *fakeAnnouncer) (string, []time.Duration, error) {
	t.Helper()
	var out bytes.Buffer
	var waits []time.Duration
	err := Run(context.Background(), cfg, Deps{
		Secrets: secrets, Announcer: a, Random: fixedRandom(), Log: discard(),
		Jitter: func() float64 { return 1 },
		Sleep:  func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}, &out)
	return out.String(), waits, err
}

func decodeBody(t *testing.T, b []byte) map[string]string {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRun_StoresTheSecretBeforeAnyHashLeaves(t *testing.T) {
	secrets := newFakeSecrets()
	a := &fakeAnnouncer{seen: func() {
		if secrets.secret("kubehz-agent") == nil {
			t.Error("hashes were announced before the Secret was stored")
		}
	}}
	out, _, err := runOnce(t, secrets, a)
	if err != nil {
		t.Fatal(err)
	}
	s := secrets.secret("kubehz-agent")
	if string(s.Data["agent-token"]) != fixedToken || string(s.Data["claim-code"]) != fixedClaim {
		t.Errorf("Secret data %v", s.Data)
	}
	want := map[string]string{"clusterId": "demo.example.net", "agentTokenSha256": fixedTokenHash, "claimCodeSha256": fixedClaimHash}
	if len(a.bodies) != 1 || !reflect.DeepEqual(decodeBody(t, a.bodies[0]), want) {
		t.Errorf("announced %q, want one body %v", a.bodies, want)
	}
	if !strings.Contains(out, "kubectl -n kubehz-system get secret kubehz-agent -o jsonpath='{.data.claim-code}' | base64 -d") {
		t.Errorf("stdout lacks the kubectl line:\n%s", out)
	}
	if strings.Contains(out, fixedToken[8:]) || strings.Contains(out, fixedClaim[5:]) {
		t.Errorf("stdout shows a secret:\n%s", out)
	}
}

func TestRun_ReRunCreatesNothingAndAnnouncesTheSameHashes(t *testing.T) {
	secrets := newFakeSecrets()
	first := &fakeAnnouncer{}
	if _, _, err := runOnce(t, secrets, first); err != nil {
		t.Fatal(err)
	}
	stored := secrets.secret("kubehz-agent").DeepCopy()
	second := &fakeAnnouncer{}
	// Different randomness would show up as different hashes.
	var out bytes.Buffer
	err := Run(context.Background(), testConfig(), Deps{
		Secrets: secrets, Announcer: second, Random: bytes.NewReader(bytes.Repeat([]byte{9}, 48)), Log: discard(),
	}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if secrets.creates != 1 {
		t.Errorf("%d creates over two runs, want 1", secrets.creates)
	}
	if !reflect.DeepEqual(secrets.secret("kubehz-agent"), stored) {
		t.Error("the second run changed the Secret")
	}
	if len(second.bodies) != 1 || !bytes.Equal(second.bodies[0], first.bodies[0]) {
		t.Errorf("second run announced %q, want the first run's %q", second.bodies, first.bodies)
	}
}

func TestRun_AfterAFailedAnnounceTheReRunAnnouncesTheStoredIdentity(t *testing.T) {
	secrets := newFakeSecrets()
	failing := &fakeAnnouncer{errs: []error{&platform.StatusError{Code: http.StatusBadRequest}}}
	if _, _, err := runOnce(t, secrets, failing); err == nil {
		t.Fatal("a refused announce reported success")
	}
	retry := &fakeAnnouncer{}
	if _, _, err := runOnce(t, secrets, retry); err != nil {
		t.Fatal(err)
	}
	body := decodeBody(t, retry.bodies[0])
	if body["agentTokenSha256"] != fixedTokenHash || secrets.creates != 1 {
		t.Errorf("re-run announced %v after %d creates", body, secrets.creates)
	}
}

func TestRun_LosingTheCreateRaceAdoptsTheWinnersIdentity(t *testing.T) {
	winner := Identity{Token: token.Token("khz_agt_" + strings.Repeat("ab", 32)), Claim: "khzc_winner0000000000"}
	secrets := newFakeSecrets()
	secrets.onCreate = func(f *fakeSecrets) { f.store["kubehz-agent"] = NewSecret("kubehz-system", "kubehz-agent", winner) }
	a := &fakeAnnouncer{}
	if _, _, err := runOnce(t, secrets, a); err != nil {
		t.Fatal(err)
	}
	wantHash, _ := winner.Hashes()
	if got := decodeBody(t, a.bodies[0])["agentTokenSha256"]; got != wantHash {
		t.Errorf("announced %s, want the winner's %s", got, wantHash)
	}
}

func TestRun_MalformedExistingSecretIsBadConfigAndLeftAlone(t *testing.T) {
	bad := &kubeapi.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubehz-agent"}, Data: map[string][]byte{"agent-token": []byte("khz_agt_short")}}
	secrets := newFakeSecrets(bad)
	a := &fakeAnnouncer{}
	_, _, err := runOnce(t, secrets, a)
	if config.ExitCode(err) != 2 {
		t.Errorf("exit code %d (%v), want 2", config.ExitCode(err), err)
	}
	if secrets.creates != 0 || len(a.bodies) != 0 {
		t.Errorf("%d creates, %d announces after a malformed Secret", secrets.creates, len(a.bodies))
	}
}

// TestRun_PresentsTheMountedBindSecretAndNeverGetsItsSecret: the bind
// secret comes from the Job's volume; the register ServiceAccount has no
// get on its Secret, so the command must not ask for it.
func TestRun_PresentsTheMountedBindSecretAndNeverGetsItsSecret(t *testing.T) {
	cfg := testConfig()
	cfg.BindFile = filepath.Join(t.TempDir(), "bind-secret")
	if err := os.WriteFile(cfg.BindFile, []byte("one-time-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := newFakeSecrets()
	a := &fakeAnnouncer{}
	if _, _, err := runWith(t, cfg, secrets, a); err != nil {
		t.Fatal(err)
	}
	if got := decodeBody(t, a.bodies[0])["bindSecret"]; got != "one-time-123" {
		t.Errorf("bindSecret %q", got)
	}
	if a.redact[0] != "one-time-123" {
		t.Errorf("the bind secret is not masked in error logs")
	}
	if !reflect.DeepEqual(secrets.gets, []string{"kubehz-agent"}) {
		t.Errorf("asked the API for Secrets %v, want only the identity Secret", secrets.gets)
	}

	cfg.BindFile = filepath.Join(t.TempDir(), "absent")
	noBind := &fakeAnnouncer{}
	if _, _, err := runWith(t, cfg, newFakeSecrets(), noBind); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(noBind.bodies[0], []byte("bindSecret")) {
		t.Errorf("without a bind secret file the body still names bindSecret: %s", noBind.bodies[0])
	}
}

func TestRun_MalformedBindSecretStopsBeforeAnythingIsWritten(t *testing.T) {
	cfg := testConfig()
	cfg.BindFile = filepath.Join(t.TempDir(), "bind-secret")
	if err := os.WriteFile(cfg.BindFile, []byte("two words"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := newFakeSecrets()
	a := &fakeAnnouncer{}
	_, _, err := runWith(t, cfg, secrets, a)
	if err == nil || !strings.Contains(err.Error(), cfg.BindFile) {
		t.Fatalf("error %v, want one naming the bind secret file", err)
	}
	if secrets.creates != 0 || len(a.bodies) != 0 {
		t.Error("something was written or sent")
	}
}

func TestRun_RetriesTransientFailuresWithBackoffAndRetryAfter(t *testing.T) {
	a := &fakeAnnouncer{errs: []error{
		errors.New("dial tcp: connection refused"),
		&platform.StatusError{Code: http.StatusServiceUnavailable, RetryAfter: 7 * time.Second},
		&platform.StatusError{Code: http.StatusInternalServerError},
	}}
	_, waits, err := runOnce(t, newFakeSecrets(), a)
	if err != nil {
		t.Fatal(err)
	}
	// Jitter 1: the backoff ceiling itself, 1 s then 2 s; the 503 asked for 7 s.
	want := []time.Duration{time.Second, 7 * time.Second, 2 * time.Second}
	if !reflect.DeepEqual(waits, want) || len(a.bodies) != 4 {
		t.Errorf("waits %v over %d posts, want %v over 4", waits, len(a.bodies), want)
	}
}

// Five waits of the 300 s a Retry-After may ask would outlast the Job's
// 900 s deadline before the Job's own retries had a turn.
func TestRun_ARetryAfterWaitsThirtySecondsAtMost(t *testing.T) {
	var errs []error
	for range 5 {
		errs = append(errs, &platform.StatusError{Code: http.StatusTooManyRequests, RetryAfter: 300 * time.Second})
	}
	a := &fakeAnnouncer{errs: errs}
	_, waits, err := runOnce(t, newFakeSecrets(), a)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	if !reflect.DeepEqual(waits, want) || len(a.bodies) != 6 {
		t.Errorf("waits %v over %d posts, want %v over 6", waits, len(a.bodies), want)
	}
}

func TestRun_GivesUpAfterSixAttempts(t *testing.T) {
	var errs []error
	for range 10 {
		errs = append(errs, &platform.StatusError{Code: http.StatusBadGateway})
	}
	a := &fakeAnnouncer{errs: errs}
	_, waits, err := runOnce(t, newFakeSecrets(), a)
	if err == nil || len(a.bodies) != 6 || len(waits) != 5 {
		t.Errorf("err %v after %d posts and %d waits, want an error after 6 and 5", err, len(a.bodies), len(waits))
	}
}

func TestRun_RefusalsAreNotRetriedAndSayWhatToCheck(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{http.StatusBadRequest, `CLUSTER_ID "demo.example.net"`},
		{http.StatusUnauthorized, "kubehz-system/kubehz-agent-bind"},
		{http.StatusForbidden, "key bind-secret"},
		{http.StatusNotFound, "KUBEHZ_API_URL"},
		{http.StatusConflict, "Secret kubehz-system/kubehz-agent was replaced or deleted"},
		{http.StatusMovedPermanently, "redirects are refused"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			var err error = &platform.StatusError{Code: tt.code}
			if tt.code/100 == 3 {
				err = &platform.RedirectError{Code: tt.code}
			}
			a := &fakeAnnouncer{errs: []error{err}}
			_, waits, got := runOnce(t, newFakeSecrets(), a)
			if got == nil || !strings.Contains(got.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", got, tt.want)
			}
			if len(a.bodies) != 1 || len(waits) != 0 {
				t.Errorf("%d posts, %d waits: a refusal was retried", len(a.bodies), len(waits))
			}
		})
	}
}

func TestRun_StopsWaitingWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &fakeAnnouncer{errs: []error{&platform.StatusError{Code: http.StatusServiceUnavailable}}}
	err := Run(ctx, testConfig(), Deps{
		Secrets: newFakeSecrets(), Announcer: a, Random: fixedRandom(), Log: discard(),
		Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return sleep(ctx, d) },
	}, &bytes.Buffer{})
	if !errors.Is(err, context.Canceled) || len(a.bodies) != 1 {
		t.Errorf("err %v after %d posts, want cancelled after 1", err, len(a.bodies))
	}
}

// A platform that takes the connection and never answers costs one request
// timeout, then the post is tried again: the timeout is no answer, not a
// refusal. The real Registrar makes the posts, so the error is the one
// net/http gives. Only the first post stalls; a later one may still time out
// on a loaded machine, so the test asks for at least one retry and one wait
// before each, not for exactly two posts.
func TestRun_RetriesAPostThatTimedOut(t *testing.T) {
	stall := make(chan struct{})
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if posts.Add(1) == 1 {
			select {
			case <-stall:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	defer close(stall)
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := platform.NewRegistrar(base, platform.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.CloseIdleConnections()
	var waits []time.Duration
	err = Run(context.Background(), testConfig(), Deps{
		Secrets: newFakeSecrets(), Announcer: reg, Random: fixedRandom(), Log: discard(),
		Jitter: func() float64 { return 1 },
		Sleep:  func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("Run: %v, want a retry to register", err)
	}
	if n := int(posts.Load()); n < 2 || len(waits) != n-1 {
		t.Errorf("%d posts and %d waits, want at least 2 posts and a wait before each retry", n, len(waits))
	}
}

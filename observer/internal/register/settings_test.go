package register

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/config"
)

func loadSettings(env map[string]string) (Settings, error) {
	return LoadSettings(context.Background(), envconfig.MapLookuper(env))
}

func TestLoadSettings_DefaultsNameTheSecretTheObserverReads(t *testing.T) {
	got, err := loadSettings(map[string]string{"CLUSTER_ID": "c1", "KUBEHZ_API_URL": "https://api.kubehz.dev"})
	if err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse("https://api.kubehz.dev")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{
		ClusterID:  "c1",
		APIURL:     api,
		Namespace:  "kubehz-system",
		SecretName: "kubehz-agent",
		// Where deploy/register's Job mounts the optional bind Secret.
		BindFile: "/var/run/secrets/kubehz/bind/bind-secret",
		LogLevel: slog.LevelInfo,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestLoadSettings_ReportsEveryBadVariableAsConfigError(t *testing.T) {
	_, err := loadSettings(map[string]string{
		"CLUSTER_ID":         "a/b",
		"KUBEHZ_API_URL":     "http://platform.example.net",
		"KUBEHZ_NAMESPACE":   "Kube_System",
		"KUBEHZ_SECRET_NAME": "-bad",
		"KUBEHZ_LOG_LEVEL":   "verbose",
	})
	var cfgErr *config.Error
	if !errors.As(err, &cfgErr) {
		t.Fatalf("want *config.Error, got %v", err)
	}
	var vars []string
	for _, p := range cfgErr.Problems {
		vars = append(vars, p.Var)
	}
	want := []string{"CLUSTER_ID", "KUBEHZ_API_URL", "KUBEHZ_NAMESPACE", "KUBEHZ_SECRET_NAME", "KUBEHZ_LOG_LEVEL"}
	if !reflect.DeepEqual(vars, want) {
		t.Errorf("problems name %v, want %v", vars, want)
	}
	if config.ExitCode(err) != 2 {
		t.Errorf("exit code %d, want 2", config.ExitCode(err))
	}
}

// The bind secret pasted into KUBEHZ_BIND_SECRET_FILE is refused, never
// quoted; an absolute path is taken.
func TestLoadSettings_RefusesABindSecretPastedInPlaceOfItsFile(t *testing.T) {
	const pasted = "b1nd-s3cr3t-value"
	env := map[string]string{"CLUSTER_ID": "c1", "KUBEHZ_API_URL": "https://platform.example.net", "KUBEHZ_BIND_SECRET_FILE": pasted}
	_, err := loadSettings(env)
	if config.ExitCode(err) != 2 || !strings.Contains(err.Error(), "KUBEHZ_BIND_SECRET_FILE: must be the absolute path") {
		t.Fatalf("got %v, want a config error naming KUBEHZ_BIND_SECRET_FILE", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("the error quotes the value: %v", err)
	}
	env["KUBEHZ_BIND_SECRET_FILE"] = "/etc/kubehz/bind"
	if c, err := loadSettings(env); err != nil || c.BindFile != "/etc/kubehz/bind" {
		t.Errorf("an absolute path: got %q, %v", c.BindFile, err)
	}
}

func TestLoadSettings_RequiresClusterAndURL(t *testing.T) {
	_, err := loadSettings(map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "CLUSTER_ID: is required") ||
		!strings.Contains(err.Error(), "KUBEHZ_API_URL: is required") {
		t.Errorf("got %v", err)
	}
}

package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActorEnv_ShipsTheHealingLimitsTheREADMESays holds deploy/actor's
// local healing limits to the defaults the README's configuration table and
// Security model give (3 Machines in flight; 600 s cooldown; 600 s startup
// window; 300 s unhealthy window), so the file an operator edits and the
// page that explains it cannot drift apart.
func TestActorEnv_ShipsTheHealingLimitsTheREADMESays(t *testing.T) {
	env, err := os.ReadFile(filepath.Join(root(t), "deploy", "actor", "actor.env"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			shipped[k] = v
		}
	}
	for name, want := range map[string]string{
		"KUBEHZ_HEAL_MAX_IN_FLIGHT":                    "3",
		"KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS":             "600",
		"KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS": "600",
		"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS":      "300",
	} {
		if got := shipped[name]; got != want {
			t.Errorf("deploy/actor/actor.env sets %s=%q, want %q", name, got, want)
		}
		row := "| `" + name + "` | `" + want + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("the README's configuration table has no row starting %s", row)
		}
	}
}

package register

import (
	"context"
	"log/slog"
	"net/url"
	"path/filepath"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/config"
)

// Settings is the configuration of `observer register`, the one-shot
// identity bootstrap. It has no token settings: the command makes the token.
type Settings struct {
	ClusterID  string
	APIURL     *url.URL // no trailing slash; a path prefix is kept
	Namespace  string   // of the identity Secret and the bind Secret
	SecretName string   // the identity Secret it creates once
	// BindFile is the one-time bind secret as the Job mounts it from its
	// optional Secret; "" reads none. A file, not an API read, so the
	// register ServiceAccount needs no get on that Secret.
	BindFile string
	LogLevel slog.Level
}

type rawSettings struct {
	ClusterID  string `env:"CLUSTER_ID"`
	APIURL     string `env:"KUBEHZ_API_URL"`
	Namespace  string `env:"KUBEHZ_NAMESPACE, default=kubehz-system"`
	SecretName string `env:"KUBEHZ_SECRET_NAME, default=kubehz-agent"`
	BindFile   string `env:"KUBEHZ_BIND_SECRET_FILE, default=/var/run/secrets/kubehz/bind/bind-secret"`
	LogLevel   string `env:"KUBEHZ_LOG_LEVEL"`
}

// bindFile refuses anything but an absolute path, without quoting it: the
// setting's name invites pasting the bind secret itself, which would
// otherwise be opened as a path and, failing, printed in the error.
func bindFile(p *config.Problems, name, v string) string {
	if v != "" && !filepath.IsAbs(v) {
		p.Add(name, "must be the absolute path of the mounted bind secret file; the bind secret itself belongs in Secret kubehz-agent-bind, never here")
		return ""
	}
	return v
}

// LoadSettings reads and validates the register command's settings with the
// same rules as the observer's; a failure is a *config.Error (exit 2).
func LoadSettings(ctx context.Context, l envconfig.Lookuper) (Settings, error) {
	return config.Load(ctx, l, func(raw rawSettings, p *config.Problems) Settings {
		return Settings{
			ClusterID:  p.ClusterID("CLUSTER_ID", raw.ClusterID),
			APIURL:     p.APIURL("KUBEHZ_API_URL", raw.APIURL),
			Namespace:  p.DNSLabel("KUBEHZ_NAMESPACE", raw.Namespace),
			SecretName: p.DNSSubdomain("KUBEHZ_SECRET_NAME", raw.SecretName),
			BindFile:   bindFile(p, "KUBEHZ_BIND_SECRET_FILE", raw.BindFile),
			LogLevel:   p.LogLevel("KUBEHZ_LOG_LEVEL", raw.LogLevel),
		}
	})
}

// Package connect opens what both binaries talk to at start-up: the
// apiserver (the built-in types the observer reads, and a dynamic client for
// custom resources) and the platform, with the agent
// token resolved once before anything is sent.
package connect

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/kubeapi"
	"kubehz.dev/agent/shared/kubeconfig"
	"kubehz.dev/agent/shared/platform"
	"kubehz.dev/agent/shared/token"
)

// Clients are the connections a binary works with.
type Clients struct {
	Rest     *rest.Config
	API      *kubeapi.Client
	Dynamic  dynamic.Interface
	Platform *platform.Client
}

// Open builds the clients. kubeAgent, when set, is appended to the
// Kubernetes User-Agent (the actor names its replica there). wrap, when set,
// wraps the Kubernetes transport closest to the wire (the actor refuses to
// send a request past its deadline there). A malformed
// token is a *config.Error (exit 2). When ctx ends while the token Secret is
// being read, Open returns ctx's error and the caller stops cleanly.
func Open(ctx context.Context, c config.Common, getenv func(string) string, kubeAgent string,
	wrap func(http.RoundTripper) http.RoundTripper, log *slog.Logger) (Clients, error) {
	restCfg, err := kubeconfig.Load(getenv)
	if err != nil {
		return Clients{}, err
	}
	if wrap != nil {
		restCfg.Wrap(wrap)
	}
	if kubeAgent != "" {
		restCfg.UserAgent += " " + kubeAgent
	}
	api, err := kubeapi.New(restCfg)
	if err != nil {
		return Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return Clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	tokens := token.NewSource(c.TokenFile, token.Options{FromEnv: c.AgentToken,
		Secret: token.FromSecret(api.Secrets(c.Namespace), c.Namespace, c.SecretName), Log: log})
	if err := config.CheckToken(ctx, tokens); err != nil {
		return Clients{}, err
	}
	if err := ctx.Err(); err != nil {
		return Clients{}, err
	}
	plat, err := platform.New(platform.Options{
		BaseURL: c.APIURL, ClusterID: c.ClusterID, Credentials: tokens,
		UserAgent: buildinfo.UserAgent(), Logger: log,
	})
	if err != nil {
		return Clients{}, err
	}
	return Clients{Rest: restCfg, API: api, Dynamic: dyn, Platform: plat}, nil
}

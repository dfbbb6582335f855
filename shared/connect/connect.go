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

// Options are what Open can do without.
type Options struct {
	// KubeAgent, when set, is appended to the Kubernetes User-Agent (the
	// actor names its replica there).
	KubeAgent string
	// Wrap, when set, wraps the Kubernetes and the platform transports
	// closest to the wire (the actor refuses there to send a request past
	// its deadline, or of a leadership term that has ended).
	Wrap func(http.RoundTripper) http.RoundTripper
	Log  *slog.Logger // nil discards
}

// Open builds the clients. A malformed token is a *config.Error (exit 2).
// When ctx ends while the token Secret is being read, Open returns ctx's
// error and the caller stops cleanly.
func Open(ctx context.Context, c config.Common, getenv func(string) string, opts Options) (Clients, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	restCfg, err := kubeconfig.Load(getenv)
	if err != nil {
		return Clients{}, err
	}
	if opts.Wrap != nil {
		restCfg.Wrap(opts.Wrap)
	}
	if opts.KubeAgent != "" {
		restCfg.UserAgent += " " + opts.KubeAgent
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
	plat, err := platform.New(c.APIURL, c.ClusterID, tokens,
		platform.Options{UserAgent: buildinfo.UserAgent(), Logger: log, Wrap: opts.Wrap})
	if err != nil {
		return Clients{}, err
	}
	return Clients{Rest: restCfg, API: api, Dynamic: dyn, Platform: plat}, nil
}

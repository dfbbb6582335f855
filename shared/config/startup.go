package config

import (
	"context"
	"errors"
	"fmt"

	"github.com/sethvargo/go-envconfig"

	"kubehz.dev/agent/shared/token"
)

// Tokens is the slice of the token source start-up needs.
type Tokens interface {
	Token(ctx context.Context) (token.Token, error)
}

// CheckToken resolves the token once at start-up, before anything is sent.
// A token that is present but malformed is bad configuration (exit 2, like a
// malformed KUBEHZ_AGENT_TOKEN); a stop during the Secret read is no error.
func CheckToken(ctx context.Context, src Tokens) error {
	_, err := src.Token(ctx)
	switch {
	case err == nil, ctx.Err() != nil:
		return nil
	case errors.Is(err, token.ErrMalformed):
		return &Error{Problems: []Problem{{Var: "agent token", Reason: err.Error()}}}
	}
	return fmt.Errorf("resolve the agent token: %w", err)
}

// ExitCode maps a binary's run error: 0 for a clean stop, 2 for bad
// configuration (nothing was sent), 1 for anything else.
func ExitCode(err error) int {
	var cfgErr *Error
	switch {
	case err == nil:
		return 0
	case errors.As(err, &cfgErr):
		return 2
	}
	return 1
}

// Getenv adapts os.Getenv-style lookups for the loaders: an empty value
// counts as unset.
func Getenv(getenv func(string) string) envconfig.Lookuper {
	return envconfig.LookuperFunc(func(k string) (string, bool) {
		v := getenv(k)
		return v, v != ""
	})
}

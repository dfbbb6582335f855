package config

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/token"
)

type tokensFunc func(context.Context) (token.Token, error)

func (f tokensFunc) Token(ctx context.Context) (token.Token, error) { return f(ctx) }

var _ Tokens = tokensFunc(nil)

func TestCheckToken_MapsEachOutcomeToItsExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		code int
	}{
		{"resolved", context.Background(), nil, 0},
		{"malformed file is bad configuration", context.Background(), fmt.Errorf("file: %w", token.ErrMalformed), 2},
		{"unreachable Secret is a runtime failure", context.Background(), errors.New("secrets \"kubehz-agent\" is forbidden"), 1},
		{"stopped while reading is a clean stop", cancelled, context.Canceled, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckToken(tc.ctx, tokensFunc(func(context.Context) (token.Token, error) { return "", tc.err }))
			if got := ExitCode(err); got != tc.code {
				t.Fatalf("exit code %d for %v, want %d", got, err, tc.code)
			}
			if err != nil && strings.Contains(err.Error(), "khz_agt_") {
				t.Fatalf("error mentions a token: %v", err)
			}
		})
	}
}

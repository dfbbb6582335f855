package config

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"kubehz.dev/agent/shared/testkit"
)

// pastedHex is the secret part of goodToken: what must never be printed.
var pastedHex = strings.TrimPrefix(goodToken, "khz_agt_")

func TestParseCommon_TokenPastedAnywhereIsNeverEchoed(t *testing.T) {
	cases := []struct {
		name    string
		envVar  string
		val     string
		refused bool
		reason  string // the whole problem, when it is fixed text
	}{
		{name: "cluster id", envVar: "CLUSTER_ID", val: goodToken, refused: true, reason: looksLikeToken},
		{name: "cluster id with a token inside", envVar: "CLUSTER_ID", val: "c1-" + goodToken, refused: true, reason: looksLikeToken},
		{name: "api url is the token", envVar: "KUBEHZ_API_URL", val: goodToken, refused: true},
		{name: "api url username", envVar: "KUBEHZ_API_URL", val: "https://" + goodToken + "@api.kubehz.dev", refused: true},
		{name: "api url password", envVar: "KUBEHZ_API_URL", val: "https://u:" + goodToken + "@api.kubehz.dev", refused: true},
		{name: "api url query", envVar: "KUBEHZ_API_URL", val: "https://api.kubehz.dev/?token=" + goodToken, refused: true},
		{name: "api url fragment", envVar: "KUBEHZ_API_URL", val: "https://api.kubehz.dev/#" + goodToken, refused: true},
		{name: "api url port", envVar: "KUBEHZ_API_URL", val: "https://api.kubehz.dev:" + goodToken, refused: true},
		{name: "api url http path", envVar: "KUBEHZ_API_URL", val: "http://api.kubehz.dev/" + goodToken, refused: true},
		{name: "api url path", envVar: "KUBEHZ_API_URL", val: "https://api.kubehz.dev/" + goodToken},
		{name: "api url host", envVar: "KUBEHZ_API_URL", val: "https://" + goodToken},
		{name: "agent token", envVar: "KUBEHZ_AGENT_TOKEN", val: goodToken},
		{name: "token file", envVar: "KUBEHZ_AGENT_TOKEN_FILE", val: goodToken, refused: true, reason: looksLikeToken},
		{name: "token file path", envVar: "KUBEHZ_AGENT_TOKEN_FILE", val: "/run/" + goodToken, refused: true, reason: looksLikeToken},
		{name: "namespace", envVar: "KUBEHZ_NAMESPACE", val: goodToken, refused: true},
		{name: "secret name", envVar: "KUBEHZ_SECRET_NAME", val: goodToken, refused: true},
		{name: "md namespace", envVar: "KUBEHZ_MD_NAMESPACE", val: goodToken, refused: true},
		{name: "log level", envVar: "KUBEHZ_LOG_LEVEL", val: goodToken, refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(testkit.Env(map[string]string{tc.envVar: tc.val}))
			if !tc.refused {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				var b strings.Builder
				slog.New(slog.NewJSONHandler(&b, nil)).Info("Config", "config", c)
				if strings.Contains(b.String(), pastedHex) {
					t.Fatalf("log line shows the token: %s", b.String())
				}
				return
			}
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Var != tc.envVar {
				t.Fatalf("err = %v, want one problem with %s", err, tc.envVar)
			}
			if strings.Contains(err.Error(), pastedHex) {
				t.Fatalf("error shows the token: %v", err)
			}
			if tc.reason != "" && cerr.Problems[0].Reason != tc.reason {
				t.Fatalf("reason %q, want %q", cerr.Problems[0].Reason, tc.reason)
			}
		})
	}
}

func TestParseCommon_APIURLPrintedAsSchemeHostPortPathOnly(t *testing.T) {
	cases := []struct {
		name   string
		val    string
		reason string // the whole problem; empty when the URL loads
		logged string // the apiURL attribute when it loads
	}{
		{
			name:   "credentials",
			val:    "https://user:pw@api.kubehz.dev:8443/base?x=1#frag",
			reason: `"https://api.kubehz.dev:8443/base" must not contain credentials`,
		},
		{
			name:   "username only",
			val:    "https://someone@api.kubehz.dev/base",
			reason: `"https://api.kubehz.dev/base" must not contain credentials`,
		},
		{
			name:   "query",
			val:    "https://api.kubehz.dev/base?secret=s3",
			reason: `"https://api.kubehz.dev/base" must not have a query or fragment`,
		},
		{
			name:   "fragment",
			val:    "https://api.kubehz.dev/#s3",
			reason: `"https://api.kubehz.dev/" must not have a query or fragment`,
		},
		{
			name:   "http with credentials and query",
			val:    "http://someone@example.com/p?s3#f",
			reason: `"http://example.com/p" must use https (http is allowed only for localhost, 127.0.0.1 or ::1)`,
		},
		{name: "loaded", val: "https://api.kubehz.dev:8443/base/", logged: "https://api.kubehz.dev:8443/base"},
		{name: "loaded with token path", val: "https://api.kubehz.dev/" + goodToken, logged: "https://api.kubehz.dev/khz_agt_***redacted***"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(testkit.Env(map[string]string{"KUBEHZ_API_URL": tc.val}))
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				if got := c.LogValue().Group()[1]; got.Key != "apiURL" || got.Value.String() != tc.logged {
					t.Fatalf("logged %v, want apiURL=%s", got, tc.logged)
				}
				return
			}
			var cerr *Error
			if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Reason != tc.reason {
				t.Fatalf("err = %v, want the one reason %s", err, tc.reason)
			}
		})
	}
}

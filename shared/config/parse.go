package config

import (
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"kubehz.dev/agent/shared/token"
)

// clusterIDPattern keeps the ID safe to splice into a URL path segment
// unescaped: no slash, no dot-dot segment, no percent sign, no query.
var clusterIDPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$`)

// The only hosts that may be reached over plain http, because the bearer
// token then never leaves the machine.
var loopback = map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true}

// ClusterID reads the cluster's ID, required and safe to splice into a URL path.
func (p *Problems) ClusterID(name, v string) string {
	switch {
	case v == "":
		p.Add(name, "is required")
	case strings.Contains(v, token.Prefix):
		// It would pass the pattern, then be logged and sent on every beat.
		p.Add(name, looksLikeToken)
	case !clusterIDPattern.MatchString(v):
		p.Add(name, "%q must be 1-253 letters, digits, '.', '_' or '-', starting and ending with a letter or digit", v)
	default:
		return v
	}
	return ""
}

// APIURL reads the platform's required base URL, https unless loopback.
func (p *Problems) APIURL(name, v string) *url.URL {
	if v == "" {
		p.Add(name, "is required")
		return nil
	}
	u, err := url.Parse(v)
	if err != nil {
		// url.Error quotes the whole input; keep only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		p.Add(name, "is not a URL: %s", err.Error())
		return nil
	}
	if reason := urlProblem(u); reason != "" {
		p.Add(name, "%q %s", printableURL(u), reason)
		return nil
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	return u
}

// printableURL is scheme://host[:port]/path: userinfo, query and fragment
// are where a credential hides, so they are never printed, not even masked.
func printableURL(u *url.URL) string {
	bare := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return bare.String()
}

// urlProblem rejects anything but a plain base URL: userinfo would be sent as
// a second credential, and a query or fragment cannot take a path appended.
func urlProblem(u *url.URL) string {
	switch {
	case u.Hostname() == "":
		return "must have a host"
	case u.Scheme == "http" && !loopback[u.Hostname()]:
		return "must use https (http is allowed only for localhost, 127.0.0.1 or ::1)"
	case u.Scheme != "https" && u.Scheme != "http":
		return "must use https"
	case u.User != nil:
		return "must not contain credentials"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "must not have a query or fragment"
	}
	return ""
}

func (p *Problems) token(name, v string) token.Token {
	if v == "" {
		return ""
	}
	if err := token.Validate(v); err != nil {
		p.Add(name, "%v", err)
		return ""
	}
	return token.Token(v)
}

// tokenFile refuses a token pasted in place of the path: the path is
// logged at start-up and named in read errors.
func (p *Problems) tokenFile(name, v string) string {
	if strings.Contains(v, token.Prefix) {
		p.Add(name, looksLikeToken)
		return ""
	}
	return v
}

// looksLikeToken never quotes the value: it is the credential itself.
const looksLikeToken = "looks like the agent token; put the token in its Secret or KUBEHZ_AGENT_TOKEN, never here"

// DNSLabel reads the name of a namespace.
func (p *Problems) DNSLabel(name, v string) string {
	return p.dnsName(name, v, validation.IsDNS1123Label, "label: at most 63 lowercase letters, digits or '-'")
}

// DNSSubdomain reads the name of an object in a namespace.
func (p *Problems) DNSSubdomain(name, v string) string {
	return p.dnsName(name, v, validation.IsDNS1123Subdomain, "subdomain: at most 253 lowercase letters, digits, '-' or '.'")
}

// dnsName keeps v when invalid finds nothing wrong with it; what describes
// the form the user should write instead.
func (p *Problems) dnsName(name, v string, invalid func(string) []string, what string) string {
	if len(invalid(v)) > 0 {
		p.Add(name, "%q is not a DNS-1123 "+what+", starting and ending with a letter or digit", v)
		return ""
	}
	return v
}

// Duration reads a Go duration greater than zero, such as 30s or 2m.
func (p *Problems) Duration(name, v string) time.Duration {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		p.Add(name, "%q is not a Go duration such as 30s or 2m", v)
	case d <= 0:
		p.Add(name, "must be greater than 0, got %s", v)
	default:
		return d
	}
	return 0
}

// Boolean follows strconv.ParseBool; blank means false.
func (p *Problems) Boolean(name, v string) bool {
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.Add(name, "%q is not a boolean (use true or false)", v)
	}
	return b
}

// LogLevel refuses what it does not know, as every other setting does: read
// as info, `verbose` would hide the debug lines the user asked for. Case is
// ignored; blank means info.
func (p *Problems) LogLevel(name, v string) slog.Level {
	switch strings.ToLower(v) {
	case "", "info":
		return slog.LevelInfo
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	p.Add(name, "%q is not a log level (use debug, info, warn or error)", v)
	return slog.LevelInfo
}

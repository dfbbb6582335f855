// Package buildinfo carries the version stamped into the binaries at build
// time, and the User-Agent derived from it.
package buildinfo

// Version is set with -ldflags "-X kubehz.dev/agent/shared/buildinfo.Version=…";
// an unstamped build says "dev".
var Version = "dev"

// UserAgent is sent on every request to the platform and to the apiserver,
// so both sides can tell which agent build they are talking to.
func UserAgent() string { return "kubehz-agent/" + Version }

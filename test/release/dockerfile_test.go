package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

// parseDockerfile splits a Dockerfile into its stages, each starting at a
// FROM. Comments and blank lines are dropped, as docker drops them.
func parseDockerfile(text string) [][]instruction {
	var stages [][]instruction
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" || len(stages) == 0 {
			stages = append(stages, nil)
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if body, more := strings.CutSuffix(trimmed, `\`); more {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		flush()
	}
	flush()
	return stages
}

var (
	builderFromRE = regexp.MustCompile(`^--platform=\$BUILDPLATFORM golang:1\.26(\.[0-9]+)?-bookworm@sha256:[0-9a-f]{64} AS \S+$`)
	syntaxRE      = regexp.MustCompile(`^# syntax=docker/dockerfile:1(\.[0-9]+)+@sha256:[0-9a-f]{64}$`)
	finalFromRE   = regexp.MustCompile(`^gcr\.io/distroless/static[^@\s]*:nonroot@sha256:[0-9a-f]{64}$`)
	labelRE       = regexp.MustCompile(`([a-z.]+)="([^"]*)"`)
)

// builderMust are what the go build line of the builder stage must carry:
// the target platform from buildx, a static build without local paths, and
// the version stamped where the binaries read it.
var builderMust = []string{
	"GOOS=${TARGETOS}", "GOARCH=${TARGETARCH}", "CGO_ENABLED=0", "GOWORK=off", "-trimpath",
	"-X kubehz.dev/agent/shared/buildinfo.Version=${VERSION}",
}

// dockerfileProblems lists how the Dockerfile of bin breaks what the image
// promises; none means it keeps every promise.
func dockerfileProblems(text, bin string) []string {
	var out []string
	// The frontend that parses the file is an image too; a moving tag
	// would let it change under a rebuild of the same commit.
	if first, _, _ := strings.Cut(text, "\n"); !syntaxRE.MatchString(first) {
		out = append(out, "syntax directive is not docker/dockerfile:1.N pinned by digest")
	}
	stages := parseDockerfile(text)
	if len(stages) < 2 {
		return []string{"not a multi-stage build"}
	}
	builder, final := stages[0], stages[len(stages)-1]
	if !builderFromRE.MatchString(builder[0].args) {
		out = append(out, "builder is not FROM --platform=$BUILDPLATFORM golang:1.26…-bookworm@sha256:… AS …")
	}
	args := declaredArgs(builder)
	for _, want := range []string{"TARGETOS", "TARGETARCH", "VERSION"} {
		if !args[want] {
			out = append(out, "builder declares no ARG "+want)
		}
	}
	build, ok := goBuild(builder)
	if !ok {
		out = append(out, "builder has no RUN … go build")
	}
	for _, want := range builderMust {
		if ok && !strings.Contains(build, want) {
			out = append(out, "go build lacks "+want)
		}
	}
	for _, in := range builder {
		if in.cmd != "COPY" || strings.HasPrefix(in.args, "--from") {
			continue
		}
		srcs := strings.Fields(in.args)
		for _, src := range srcs[:len(srcs)-1] {
			if !strings.HasPrefix(src, "shared/") && !strings.HasPrefix(src, bin+"/") {
				out = append(out, "builder copies "+src+", outside shared/ and "+bin+"/")
			}
		}
	}
	if !finalFromRE.MatchString(final[0].args) {
		out = append(out, "final stage is not distroless static nonroot pinned by digest")
	}
	out = append(out, userProblems(final)...)
	out = append(out, labelProblems(final)...)
	for _, stage := range stages {
		for _, in := range stage {
			if in.cmd == "EXPOSE" {
				out = append(out, "EXPOSE: the agent listens on nothing")
			}
		}
	}
	return out
}

func declaredArgs(stage []instruction) map[string]bool {
	args := map[string]bool{}
	for _, in := range stage {
		if in.cmd != "ARG" {
			continue
		}
		for _, f := range strings.Fields(in.args) {
			name, _, _ := strings.Cut(f, "=")
			args[name] = true
		}
	}
	return args
}

// goBuild returns the shell command of the builder's RUN that runs go build,
// without RUN's own --flags.
func goBuild(stage []instruction) (string, bool) {
	for _, in := range stage {
		if in.cmd != "RUN" || !strings.Contains(in.args, "go build") {
			continue
		}
		fields := strings.Fields(in.args)
		for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
			fields = fields[1:]
		}
		return strings.Join(fields, " "), true
	}
	return "", false
}

// userProblems wants the last USER numeric with a non-zero uid and gid: a
// name needs /etc/passwd, which a scratch-like image may lack, and a
// kubelet can only enforce runAsNonRoot on a number.
func userProblems(final []instruction) []string {
	user := ""
	for _, in := range final {
		if in.cmd == "USER" {
			user = in.args
		}
	}
	if user == "" {
		return []string{"no USER: the image would run as root"}
	}
	uid, gid, hasGID := strings.Cut(user, ":")
	ids := []string{uid}
	if hasGID {
		ids = append(ids, gid)
	}
	for _, id := range ids {
		if n, err := strconv.Atoi(id); err != nil || n == 0 {
			return []string{"USER " + strconv.Quote(user) + " is not a numeric non-root uid:gid"}
		}
	}
	return nil
}

// labelProblems wants the OCI labels on the final image, fed from build
// arguments declared in that stage (an ARG does not cross a FROM).
func labelProblems(final []instruction) []string {
	labels := map[string]string{}
	for _, in := range final {
		if in.cmd == "LABEL" {
			for _, m := range labelRE.FindAllStringSubmatch(in.args, -1) {
				labels[m[1]] = m[2]
			}
		}
	}
	var out []string
	args := declaredArgs(final)
	for key, arg := range map[string]string{"source": "SOURCE", "version": "VERSION", "revision": "REVISION"} {
		if labels["org.opencontainers.image."+key] != "${"+arg+"}" || !args[arg] {
			out = append(out, "label org.opencontainers.image."+key+" is not set from a final-stage ARG "+arg)
		}
	}
	for _, key := range []string{"title", "description"} {
		if labels["org.opencontainers.image."+key] == "" {
			out = append(out, "no org.opencontainers.image."+key+" label")
		}
	}
	if labels["org.opencontainers.image.licenses"] != "Apache-2.0" {
		out = append(out, "label org.opencontainers.image.licenses is not Apache-2.0")
	}
	slices.Sort(out)
	return out
}

// TestDockerfiles_PinnedCrossCompilingNonRootLabelled reads both Dockerfiles:
// a digest-pinned builder on the build platform that cross-compiles a
// static, trimmed, version-stamped binary from shared/ and the binary's own
// module only, onto distroless static nonroot by digest with a numeric
// non-root USER and the OCI labels. The Dockerfile these replaced, planted,
// shows each check can fail.
func TestDockerfiles_PinnedCrossCompilingNonRootLabelled(t *testing.T) {
	planted := "FROM golang:1.26-bookworm AS build\nCOPY . .\nARG VERSION=dev\n" +
		"RUN cd observer && GOWORK=off CGO_ENABLED=0 go build -trimpath -o /out/observer .\n" +
		"FROM gcr.io/distroless/static-debian12:nonroot\nCOPY --from=build /out/observer /observer\nUSER nonroot\nEXPOSE 8080\n"
	got := dockerfileProblems(planted, "observer")
	for _, want := range []string{
		"builder is not FROM", "builder declares no ARG TARGETOS", "go build lacks GOARCH=${TARGETARCH}",
		"go build lacks -X kubehz.dev/agent/shared/buildinfo.Version=${VERSION}", "builder copies .,",
		"final stage is not distroless", "USER \"nonroot\"", "label org.opencontainers.image.licenses is not Apache-2.0",
		"label org.opencontainers.image.revision", "EXPOSE", "syntax directive",
	} {
		if !slices.ContainsFunc(got, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("the planted Dockerfile was not caught for %q (found %q)", want, got)
		}
	}

	for _, bin := range []string{"observer", "actor"} {
		t.Run(bin, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(root(t), "Dockerfile."+bin))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range dockerfileProblems(string(b), bin) {
				t.Error(p)
			}
		})
	}
}

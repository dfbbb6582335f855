package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The environment the Makefile (or a developer) sets.
const (
	// sizesEnv chooses the variants: "small" (make bench), "large" (make
	// bench-large) or a list such as "10x50-nocrd,10x50,100x5000".
	sizesEnv = "KUBEHZ_BENCH_SIZES"
	// outEnv is where the JSON results go; default bin/bench/results.json.
	outEnv = "KUBEHZ_BENCH_OUT"
	// workersEnv is how many concurrent writers populate the cluster.
	workersEnv = "KUBEHZ_BENCH_WORKERS"
	// agentEnvEnv is extra environment for every binary, space-separated.
	agentEnvEnv = "KUBEHZ_BENCH_AGENT_ENV"
)

// variant is one cluster size the binaries run against.
type variant struct {
	Nodes int `json:"nodes"`
	Pods  int `json:"pods"`
	// CRDs: machine-controller's and lok8s' CRDs are installed, with one
	// MachineDeployment and MachineSet per pool and a Machine per Node.
	// Without them the binaries must learn from discovery that they are
	// absent.
	CRDs bool `json:"crds"`
	// Restart the apiserver after populating, so it holds steady-state
	// memory, not the garbage of the writes, when the binaries start.
	Restart bool `json:"restartedAPIServer"`
}

func (v variant) String() string {
	s := fmt.Sprintf("nodes=%d/pods=%d", v.Nodes, v.Pods)
	if !v.CRDs {
		s += "/no-crds"
	}
	return s
}

// The presets: the smallest size first without the CRDs, then every size
// with them.
var (
	smallVariants = []variant{
		{Nodes: 10, Pods: 50},
		{Nodes: 10, Pods: 50, CRDs: true},
		{Nodes: 100, Pods: 5_000, CRDs: true},
		{Nodes: 1_000, Pods: 50_000, CRDs: true},
	}
	largeVariants = append(smallVariants[:len(smallVariants):len(smallVariants)],
		variant{Nodes: 5_000, Pods: 150_000, CRDs: true, Restart: true})
)

// parseVariants reads a preset or a comma-separated list of NODESxPODS,
// each optionally suffixed -nocrd or -restart. The cluster only grows and
// the CRDs, once installed, stay: sizes must not shrink and every -nocrd
// variant must come before the others.
func parseVariants(spec string) ([]variant, error) {
	switch strings.TrimSpace(spec) {
	case "", "small":
		return smallVariants, nil
	case "large":
		return largeVariants, nil
	}
	var out []variant
	for item := range strings.SplitSeq(spec, ",") {
		v, err := parseVariant(strings.TrimSpace(item))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sizesEnv, err)
		}
		if n := len(out); n > 0 {
			prev := out[n-1]
			if v.Nodes < prev.Nodes || v.Pods < prev.Pods {
				return nil, fmt.Errorf("%s: %s is smaller than %s before it; the cluster only grows", sizesEnv, v, prev)
			}
			if prev.CRDs && !v.CRDs {
				return nil, fmt.Errorf("%s: %s comes after the CRDs were installed", sizesEnv, v)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func parseVariant(item string) (variant, error) {
	v := variant{CRDs: true}
	size, flags, _ := strings.Cut(item, "-")
	for flag := range strings.SplitSeq(flags, "-") {
		switch flag {
		case "":
		case "nocrd":
			v.CRDs = false
		case "restart":
			v.Restart = true
		default:
			return v, fmt.Errorf("%q: unknown suffix %q (want -nocrd or -restart)", item, flag)
		}
	}
	nodes, pods, ok := strings.Cut(size, "x")
	var err1, err2 error
	v.Nodes, err1 = strconv.Atoi(nodes)
	v.Pods, err2 = strconv.Atoi(pods)
	if !ok || err1 != nil || err2 != nil || v.Nodes < 1 || v.Pods < 0 {
		return v, fmt.Errorf("%q is not NODESxPODS", item)
	}
	return v, nil
}

func workers() int {
	if n, err := strconv.Atoi(os.Getenv(workersEnv)); err == nil && n > 0 {
		return n
	}
	return 32
}

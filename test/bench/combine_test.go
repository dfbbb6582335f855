package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"kubehz.dev/agent/test/kube"
)

// fromEnv names saved results files (comma-separated) to print and chart
// together instead of measuring: `make bench` and a later run of the
// largest size alone (KUBEHZ_BENCH_SIZES=5000x150000-restart) make one
// table and one chart without repeating the hour the smaller sizes take.
const fromEnv = "KUBEHZ_BENCH_FROM"

// savedRun is one results file as writeJSON wrote it.
type savedRun struct {
	Machine   machine   `json:"machine"`
	WindowSec float64   `json:"windowSec"`
	AgentEnv  string    `json:"agentEnv"`
	Results   []*result `json:"results"`
}

// combine prints the saved runs as one report and writes the chart when
// they pass and cover make bench's sizes. The runs must share the window;
// the caption names the first run's machine.
func combine(w io.Writer, files string) error {
	var runs []savedRun
	for _, f := range strings.Split(files, ",") {
		b, err := os.ReadFile(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		var r savedRun
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if len(runs) > 0 && r.WindowSec != runs[0].WindowSec {
			return fmt.Errorf("%s: window %.0fs, the first file's is %.0fs", f, r.WindowSec, runs[0].WindowSec)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return fmt.Errorf("%s names no file", fromEnv)
	}
	root, err := kube.RepoRoot()
	if err != nil {
		return err
	}
	// The chart's limit line and its path come from the harness.
	if harness.deployed, err = deployedEnv(root); err != nil {
		return err
	}
	harness.env = &kube.Env{Root: root}
	defer func() { harness.env = nil }()

	var (
		results   []*result
		agentEnvs []string
	)
	passed := true
	for _, r := range runs {
		fmt.Fprintf(w, "\nFrom a run on %s, steady window %.0fs%s:\n", r.Machine, r.WindowSec, overrideNote(r.AgentEnv))
		agentEnvs = append(agentEnvs, r.AgentEnv)
		for _, res := range r.Results {
			passed = passed && res.Passed
			results = append(results, res)
		}
	}
	printSummary(w, results)
	for _, r := range results {
		printRequests(w, r)
	}
	if why := chartRefusal(passed, results, agentEnvs); why != "" {
		fmt.Fprintln(w, "\nNot writing docs/bench-memory.svg: "+why+".")
		return nil
	}
	return writeSVG(results, time.Duration(runs[0].WindowSec*float64(time.Second)), runs[0].Machine)
}

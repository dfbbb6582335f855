package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"kubehz.dev/agent/test/kube"
)

// machine says what the figures were measured on.
type machine struct {
	CPUs        int    `json:"cpus"`
	MemoryGiB   int    `json:"memoryGiB"`
	KubeVersion string `json:"kubeVersion"`
	GoVersion   string `json:"goVersion"`
	Date        string `json:"date"`
}

func thisMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), KubeVersion: harness.kubeVersion, GoVersion: runtime.Version(),
		Date: time.Now().UTC().Format(time.DateOnly)}
	if total, err := procStatusFile("/proc/meminfo", "MemTotal"); err == nil {
		m.MemoryGiB = int((total + 1<<29) >> 30)
	}
	return m
}

func (m machine) String() string {
	return fmt.Sprintf("%d cores, %d GiB, kube-apiserver %s, %s, %s", m.CPUs, m.MemoryGiB, m.KubeVersion, m.GoVersion, m.Date)
}

// report prints the summary table and the request tables, writes the JSON
// results and, for a passing run that covered make bench's sizes, the chart.
func report(w io.Writer, results []*result, win time.Duration, passed bool) error {
	if len(results) == 0 {
		return nil
	}
	m := thisMachine()
	extra := os.Getenv(agentEnvEnv)
	fmt.Fprintf(w, "\nScale harness on %s; steady window %s%s.\n", m, win, overrideNote(extra))
	fmt.Fprintln(w, "RSS med/max/peak: median and largest of the per-second samples in the window / VmHWM since start, MiB. CPU m: millicores over the window.")
	fmt.Fprintln(w, "beat s: observer start to its first beat that counted every pod and node. ready s: actor leader start to the end of its first pass.")
	printSummary(w, results)
	for _, r := range results {
		printRequests(w, r)
	}
	errs := []error{writeJSON(results, win, m, extra)}
	if why := chartRefusal(passed, results, []string{extra}); why != "" {
		fmt.Fprintln(w, "\nNot writing docs/bench-memory.svg: "+why+".")
	} else {
		errs = append(errs, writeSVG(results, win, m))
	}
	return errors.Join(errs...)
}

// overrideNote names the environment a run added to deploy/'s, for the
// header of its table.
func overrideNote(extra string) string {
	if extra == "" {
		return ""
	}
	return "; the binaries had " + agentEnvEnv + "=" + strconv.Quote(extra) + " on top of deploy/'s environment"
}

// chartRefusal is why the runs behind results may not be charted, or "".
// The README shows the chart as what ships, so it takes only passing runs
// of every make bench size, with the environment deploy/ gives the
// binaries and nothing added (agentEnvs holds each run's addition).
func chartRefusal(passed bool, results []*result, agentEnvs []string) string {
	switch {
	case !passed:
		return "it needs a passing run"
	case !coversMakeBench(results):
		return "it needs a run of every make bench size"
	}
	for _, extra := range agentEnvs {
		if extra != "" {
			return "a run had " + agentEnvEnv + "=" + strconv.Quote(extra) + ", so it did not measure what ships"
		}
	}
	return ""
}

func printSummary(w io.Writer, results []*result) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "nodes\tpods\tCRDs\tcreated/s\tobserver RSS med/max/peak\tobs CPU m\tbeat s\tbeat KiB\t"+
		"leader RSS med/max/peak\tleader CPU m\tready s\tstandby RSS med/max/peak\tstandby CPU m\tLISTs obs/lead/stby\tpassed\t")
	for _, r := range results {
		crds := "n"
		if r.Variant.CRDs {
			crds = "y"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.0f\t%s\t%.1f\t%.1f\t%.1f\t%s\t%.1f\t%.1f\t%s\t%.1f\t%d/%d/%d\t%t\t\n",
			r.Variant.Nodes, r.Variant.Pods, crds, r.Populated.rate(),
			medPeak(r.Observer), r.Observer.Millicores, r.FirstFullBeatSec, float64(r.BeatBytes)/1024,
			medPeak(r.Leader), r.Leader.Millicores, r.LeaderReadySec,
			medPeak(r.Standby), r.Standby.Millicores,
			r.Lists["observer"], r.Lists["actor leader"], r.Lists["actor standby"], r.Passed)
	}
	tw.Flush()
}

func medPeak(s stats) string {
	return fmt.Sprintf("%.1f / %.1f / %.1f", s.RSSMedianMiB, s.RSSMaxMiB, s.PeakMiB)
}

func printRequests(w io.Writer, r *result) {
	fmt.Fprintf(w, "\nRequests, %s: before the window (start-up, initial sync) and in the %.0fs window\n", r.Variant, r.WindowSec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "process\tverb\ttarget\tbefore\twindow\t")
	for _, row := range r.Requests {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t\n", row.Process, row.Verb, row.Target, row.Before, row.Window)
	}
	tw.Flush()
}

// outPath is where the JSON results go: KUBEHZ_BENCH_OUT, or
// bin/bench/results.json in the repository (bin/ is ignored by git).
func outPath() string {
	if p := os.Getenv(outEnv); p != "" {
		return p
	}
	return filepath.Join(harness.env.Root, "bin", "bench", "results.json")
}

func writeJSON(results []*result, win time.Duration, m machine, extra string) error {
	doc := struct {
		Machine   machine   `json:"machine"`
		Sizes     string    `json:"sizes"`
		WindowSec float64   `json:"windowSec"`
		AgentEnv  string    `json:"agentEnv,omitempty"`
		Results   []*result `json:"results"`
	}{m, os.Getenv(sizesEnv), win.Seconds(), extra, results}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	path := outPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\nResults written to %s\n", path)
	return nil
}

// coversMakeBench reports whether every make bench size with the CRDs ran.
func coversMakeBench(results []*result) bool {
	for _, want := range smallVariants {
		if !want.CRDs {
			continue
		}
		found := false
		for _, r := range results {
			found = found || r.Variant.CRDs && r.Variant.Nodes == want.Nodes && r.Variant.Pods == want.Pods
		}
		if !found {
			return false
		}
	}
	return true
}

// memoryLimitMiB is the observer's KUBEHZ_MEMORY_LIMIT as deploy/ sets it.
func memoryLimitMiB() float64 {
	for _, kv := range harness.deployed.observer {
		if v, ok := strings.CutPrefix(kv, "KUBEHZ_MEMORY_LIMIT="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return kube.MiB(n)
		}
	}
	return 0
}

func writeSVG(results []*result, win time.Duration, m machine) error {
	var points []chartPoint
	for _, r := range results {
		if r.Variant.CRDs {
			points = append(points, chartPoint{pods: r.Variant.Pods, nodes: r.Variant.Nodes,
				observer: r.Observer.RSSMedianMiB, leader: r.Leader.RSSMedianMiB})
		}
	}
	path := filepath.Join(harness.env.Root, "docs", "bench-memory.svg")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	caption := fmt.Sprintf("Median RSS over a %s steady window. Measured %s on %d cores, %d GiB, kube-apiserver %s, %s.",
		win, m.Date, m.CPUs, m.MemoryGiB, m.KubeVersion, m.GoVersion)
	if err := os.WriteFile(path, []byte(chart(points, memoryLimitMiB(), caption)), 0o644); err != nil {
		return err
	}
	fmt.Printf("Chart written to %s\n", path)
	return nil
}

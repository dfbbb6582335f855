package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
)

// BenchmarkScale runs the observer and two actor replicas, built without
// -race, as deploy/ runs them, against each variant of KUBEHZ_BENCH_SIZES in
// turn on one growing cluster, and prints a table of the figures, the
// requests each binary made, and writes them as JSON (and, for a complete
// passing `make bench`, the chart docs/bench-memory.svg). Per variant:
//
//   - populate the cluster to the size (nodes, pods, Warning events and,
//     with the CRDs, a MachineDeployment and MachineSet per pool and a
//     Machine per Node) with concurrent writers, and report the rate;
//   - start the binaries and wait for the observer's first beat that counted
//     every pod and node, and for the actor leader's first pass over its
//     caches;
//   - sample a steady window (KUBEHZ_BENCH_WINDOW, default 360 s): resident
//     memory every second, CPU over the window, the peak since start;
//   - stop the binaries, which must exit 0 on SIGTERM, and count their
//     requests from the audit log; a LIST in the window fails the variant.
//
// Nothing here is timed as an assertion: the figures are printed. Run it
// once (-benchtime=1x); the window is its only loop.
func BenchmarkScale(b *testing.B) {
	if files := os.Getenv(fromEnv); files != "" {
		if err := combine(os.Stdout, files); err != nil {
			b.Fatal(err)
		}
		return
	}
	variants, err := parseVariants(os.Getenv(sizesEnv))
	if err != nil {
		b.Fatal(err)
	}
	win, err := kube.Window()
	if err != nil {
		b.Fatal(err)
	}
	began = time.Now()
	logf("scale harness: %s=%q: %v; steady window %s (%s); %d writers",
		sizesEnv, os.Getenv(sizesEnv), variants, win, kube.WindowEnv, workers())
	harness.once.Do(func() { harness.err = startHarness() })
	if harness.err != nil {
		b.Fatal(harness.err)
	}
	var results []*result
	passed := true
	for _, v := range variants {
		res := &result{Variant: v}
		ran := false
		passed = b.Run(v.String(), func(b *testing.B) { ran = measure(b, v, win, res) }) && passed
		if ran {
			results = append(results, res)
		}
	}
	if err := report(os.Stdout, results, win, passed); err != nil {
		b.Error(err)
	}
}

// measure runs one variant into res; false when it was skipped.
func measure(b *testing.B, v variant, win time.Duration, res *result) bool {
	if h := harness.held; v.Nodes < h.nodes || v.Pods < h.pods || h.crds && !v.CRDs {
		b.Skipf("the cluster already holds %d nodes and %d pods (CRDs %t); run with -count=1", h.nodes, h.pods, h.crds)
	}
	ctx := context.Background()
	if v.CRDs && !harness.held.crds {
		if err := installCRDs(); err != nil {
			b.Fatal(err)
		}
		harness.held.crds = true
		logf("installed the optional CRDs: %v", optionalCRDs())
	}
	logf("== %s: populating with %d writers", v, workers())
	if err := populate(ctx, v, res); err != nil {
		b.Fatal(err)
	}
	r, err := startRun(v, res)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(r.stop)
	if err := r.awaitFullBeat(ctx); err != nil {
		b.Fatal(err)
	}
	logf("  observer: first full beat %.1fs after start, using %.1fs of its CPU, %d bytes (the very first beat counted everything: %t)",
		res.FirstFullBeatSec, res.FirstBeatCPUSec, res.BeatBytes, res.FirstBeatFull)
	if err := r.awaitLeader(ctx); err != nil {
		b.Fatal(err)
	}
	if err := r.awaitLeaderReady(ctx); err != nil {
		b.Fatal(err)
	}
	logf("  actor: %s leads, %s stands by; the leader's first pass ended %.1fs after start",
		r.leader.name, r.standby().name, res.LeaderReadySec)
	logf("  steady window: %s", win)

	var from, to time.Time
	for b.Loop() {
		if from, to, err = r.sample(win); err != nil {
			b.Fatal(err)
		}
	}
	res.WindowSec = to.Sub(from).Seconds()
	res.Observer, res.Leader, res.Standby = r.observer.stats, r.leader.stats, r.standby().stats

	r.stop()
	if err := r.stopErrors(); err != nil {
		b.Error(err)
	}
	events, err := kube.ReadAudit(harness.auditLog, r.offset)
	if err != nil {
		b.Fatal(err)
	}
	res.Requests = tallyRequests(events, r.roles(), from, to)
	res.Lists = map[string]int{}
	for _, row := range res.Requests {
		if row.Verb == "list" && row.Window > 0 {
			res.Lists[row.Process] += row.Window
			b.Errorf("defect: %s sent %d LIST of %s in the steady window", row.Process, row.Window, row.Target)
		}
	}
	reportMetrics(b, res)
	res.Passed = !b.Failed()
	return true
}

// populate grows the cluster to v and, for a variant that asks, restarts
// the apiserver so it starts the binaries' run with steady-state memory.
func populate(ctx context.Context, v variant, res *result) error {
	// Generous: a few milliseconds an object on a loaded 2-core machine.
	objects := v.Nodes*8 + v.Pods + v.Pods/podsPerEvent
	gctx, cancel := context.WithTimeout(ctx, 10*time.Minute+time.Duration(objects)*20*time.Millisecond)
	defer cancel()
	pop, err := grow(gctx, v)
	if err != nil {
		return err
	}
	res.Populated = pop
	logf("  populated: %d objects, %d requests in %.1fs: %.0f objects/s, %.0f requests/s",
		pop.Objects, pop.Requests, pop.Seconds, pop.rate(), float64(pop.Requests)/max(pop.Seconds, 1e-9))
	if !v.Restart {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	began := time.Now()
	if err := harness.env.RestartAPIServer(rctx, time.Second); err != nil {
		return err
	}
	// /readyz passes before the CRDs' handlers are back: a binary started
	// then would be timed against the apiserver's warm-up, not its own.
	if v.CRDs {
		if err := awaitCRDsServed(rctx); err != nil {
			return err
		}
	}
	logf("  restarted the apiserver (%.1fs) so it holds steady-state memory only", time.Since(began).Seconds())
	return nil
}

func reportMetrics(b *testing.B, res *result) {
	b.ReportMetric(0, "ns/op") // the loop is the window, not an operation
	b.ReportMetric(res.Observer.RSSMedianMiB, "observer-rss-MiB")
	b.ReportMetric(res.Observer.PeakMiB, "observer-peak-MiB")
	b.ReportMetric(res.Observer.Millicores, "observer-mcores")
	b.ReportMetric(res.FirstFullBeatSec, "first-beat-s")
	b.ReportMetric(res.FirstBeatCPUSec, "first-beat-observer-cpu-s")
	b.ReportMetric(float64(res.BeatBytes)/1024, "beat-KiB")
	b.ReportMetric(res.Leader.RSSMedianMiB, "leader-rss-MiB")
	b.ReportMetric(res.Standby.RSSMedianMiB, "standby-rss-MiB")
	b.ReportMetric(res.Populated.rate(), "created-obj/s")
}

// began is when the benchmark started, for the progress lines.
var began = time.Now()

// logf prints a progress line at once: b.Log would hold it until the
// variant ends, and a large one takes most of an hour.
func logf(format string, args ...any) {
	fmt.Printf("[%6.0fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
}

package bench

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubehz.dev/agent/test/kube"
)

// The harness' own logic, checked without a control plane: these run on
// every `go test` and start nothing.

func TestParseVariants(t *testing.T) {
	got, err := parseVariants("10x50-nocrd, 10x50,5000x150000-restart")
	if err != nil {
		t.Fatal(err)
	}
	want := []variant{{Nodes: 10, Pods: 50}, {Nodes: 10, Pods: 50, CRDs: true}, {Nodes: 5000, Pods: 150000, CRDs: true, Restart: true}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, preset := range []string{"", "small", "large"} {
		if _, err := parseVariants(preset); err != nil {
			t.Errorf("%q: %v", preset, err)
		}
	}
	if large, _ := parseVariants("large"); !large[len(large)-1].Restart || len(large) != len(smallVariants)+1 {
		t.Errorf("large is not small plus a restarted largest size: %v", large)
	}
	for _, bad := range []string{"10x50,10x49", "10x50,10x50-nocrd", "10", "10x50-fast", "x50"} {
		if _, err := parseVariants(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestTallyRequests_SplitsAtTheWindowAndCountsAWatchOnce(t *testing.T) {
	from := time.Date(2026, 7, 6, 12, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	lines := []string{
		// Before the window: the list, and the watch opened (then ended).
		`{"stage":"ResponseComplete","verb":"list","user":{"username":"` + kube.ObserverUser + `"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-07-06T11:59:00Z"}`,
		`{"auditID":"w1","stage":"ResponseStarted","verb":"watch","user":{"username":"` + kube.ObserverUser + `"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-07-06T11:59:01Z"}`,
		`{"auditID":"w1","stage":"ResponseComplete","verb":"watch","user":{"username":"` + kube.ObserverUser + `"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-07-06T11:59:01Z"}`,
		// In it: a discovery GET by the leader and a list by the standby.
		`{"stage":"ResponseComplete","verb":"get","requestURI":"/apis/cluster.k8s.io/v1alpha1?timeout=32s","userAgent":"actor/v1 actor/actor-x-abcde_0f0f","user":{"username":"` + kube.ActorUser + `"},"requestReceivedTimestamp":"2026-07-06T12:00:10Z"}`,
		`{"stage":"ResponseComplete","verb":"list","userAgent":"actor/v1 actor/actor-x-fghij_0a0a","user":{"username":"` + kube.ActorUser + `"},"objectRef":{"resource":"machines","apiGroup":"cluster.k8s.io"},"requestReceivedTimestamp":"2026-07-06T12:00:20Z"}`,
		// After it (shutdown), and someone else's: left out.
		`{"stage":"ResponseComplete","verb":"update","user":{"username":"` + kube.ActorUser + `"},"objectRef":{"resource":"leases","apiGroup":"coordination.k8s.io"},"requestReceivedTimestamp":"2026-07-06T12:02:00Z"}`,
		`{"stage":"ResponseComplete","verb":"list","user":{"username":"system:admin"},"objectRef":{"resource":"pods"},"requestReceivedTimestamp":"2026-07-06T12:00:30Z"}`,
		`{"stage":"Resp`, // a line still being written
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := kube.ReadAudit(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{"actor-x-abcde": "actor leader", "actor-x-fghij": "actor standby"}
	got := tallyRequests(events, roles, from, to)
	want := []requestRow{
		{Process: "actor leader", Verb: "get", Target: "/apis/cluster.k8s.io/v1alpha1", Window: 1},
		{Process: "actor standby", Verb: "list", Target: "cluster.k8s.io/machines", Window: 1},
		{Process: "observer", Verb: "list", Target: "pods", Before: 1},
		{Process: "observer", Verb: "watch", Target: "pods", Before: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
}

func TestChartRefusal_ChartsOnlyPassingRunsOfEverySizeAsShipped(t *testing.T) {
	// make bench's sizes with the CRDs, as the README's table lists them.
	var all []*result
	for _, s := range [][2]int{{10, 50}, {100, 5_000}, {1_000, 50_000}} {
		all = append(all, &result{Variant: variant{Nodes: s[0], Pods: s[1], CRDs: true}})
	}
	tests := []struct {
		name      string
		passed    bool
		results   []*result
		agentEnvs []string
		refuses   string // "" when the chart is written
	}{
		{"every size, passing, as shipped", true, all, []string{""}, ""},
		{"two saved runs, neither with extra env", true, all, []string{"", ""}, ""},
		{"a failed run", false, all, []string{""}, "passing"},
		{"a size missing", true, all[:2], []string{""}, "every make bench size"},
		{"extra env on the binaries", true, all, []string{"GOMAXPROCS=64"}, "GOMAXPROCS=64"},
		{"extra env in one of two saved runs", true, all, []string{"", "GOGC=100"}, "GOGC=100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chartRefusal(tt.passed, tt.results, tt.agentEnvs)
			if tt.refuses == "" && got != "" {
				t.Fatalf("refused: %s", got)
			}
			if tt.refuses != "" && !strings.Contains(got, tt.refuses) {
				t.Fatalf("got %q, want a refusal naming %q", got, tt.refuses)
			}
		})
	}
}

func TestChart_IsWellFormedSVG(t *testing.T) {
	svg := chart([]chartPoint{{50, 10, 30.1, 25.2}, {5000, 100, 41, 30}, {50000, 1000, 95.5, 52}}, 128,
		"Measured <today> on 2 cores & friends")
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, svg)
		}
	}
	for _, want := range []string{"observer", "actor leader", "95.5", "10k", "1k nodes", "limit in deploy/: 128 MiB", "&lt;today&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
}

func TestCPUTicksAndStatusOfThisProcess(t *testing.T) {
	pid := os.Getpid()
	if _, err := cpuTicks(pid); err != nil {
		t.Error(err)
	}
	if rss, err := procStatus(pid, "VmRSS"); err != nil || rss <= 0 {
		t.Errorf("VmRSS %d, %v", rss, err)
	}
}

// TestRetried_WritesAgainOnlyWhileTheAPIServerIsTooBusy: a server-side
// timeout or a 429 is tried again, at most 5 times in all; anything else,
// success included, is final at once.
func TestRetried_WritesAgainOnlyWhileTheAPIServerIsTooBusy(t *testing.T) {
	defer func(d time.Duration) { firstRetry = d }(firstRetry)
	firstRetry = time.Millisecond
	busy := apierrors.NewTimeoutError("request did not complete within requested timeout", 0)
	tests := []struct {
		name      string
		answers   []error // the last repeats
		wantCalls int
	}{
		{"busy twice, then written", []error{busy, apierrors.NewTooManyRequests("slow down", 1), nil}, 3},
		{"busy every time", []error{busy}, 5},
		{"refused", []error{apierrors.NewBadRequest("no")}, 1},
		{"written at once", []error{nil}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := retried(t.Context(), func() error {
				calls++
				return tt.answers[min(calls, len(tt.answers))-1]
			})
			if calls != tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, tt.wantCalls)
			}
			want := tt.answers[min(tt.wantCalls, len(tt.answers))-1]
			if !errors.Is(err, want) {
				t.Errorf("error %v, want %v", err, want)
			}
		})
	}
}

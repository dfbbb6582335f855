package release

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ruleFile is the Prometheus rule-group format of deploy/monitoring/alerts.yaml.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// TestMonitoring_AlertsNameTheRealObjects holds the shipped alert rules to
// deploy/: every namespace, Deployment and Lease a selector names is one the
// manifests really create, so renaming an object fails here instead of
// silencing an alert in production. kube-state-metrics gives
// kube_lease_renew_time only a lease label, so a namespace matcher on it
// would match nothing.
func TestMonitoring_AlertsNameTheRealObjects(t *testing.T) {
	objs, actor := renderDeployment(t, "actor", "actor")
	deployments := map[string]string{} // name -> namespace
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deployments[o.GetName()] = o.GetNamespace()
		}
	}
	lease := ""
	for _, e := range actor.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "KUBEHZ_ACTOR_LEASE" {
			lease = e.Value
		}
	}
	if lease == "" || deployments["observer"] == "" {
		t.Fatalf("deploy/actor renders no observer Deployment or no KUBEHZ_ACTOR_LEASE (lease %q, deployments %v)", lease, deployments)
	}

	b, err := os.ReadFile(filepath.Join(root(t), "deploy", "monitoring", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(b, &rf); err != nil {
		t.Fatalf("alerts.yaml is not Prometheus rule groups: %v", err)
	}
	selector := regexp.MustCompile(`([a-z_:]+)\{([^}]*)\}`)
	matcher := regexp.MustCompile(`(\w+)\s*=~?\s*"([^"]*)"`)
	alerts := map[string]string{} // alert -> group
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = g.Name
			if r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: wants for, a severity label and a summary", r.Alert)
			}
			sels := selector.FindAllStringSubmatch(r.Expr, -1)
			if len(sels) == 0 {
				t.Errorf("%s: expression selects no series: %s", r.Alert, r.Expr)
			}
			for _, s := range sels {
				metric, labels := s[1], map[string]string{}
				for _, m := range matcher.FindAllStringSubmatch(s[2], -1) {
					labels[m[1]] = m[2]
				}
				for k, v := range labels {
					switch k {
					case "deployment":
						if _, ok := deployments[v]; !ok {
							t.Errorf("%s: %s names Deployment %q; deploy/ has %v", r.Alert, metric, v, slices.Sorted(maps.Keys(deployments)))
						}
						if ns := deployments[v]; labels["namespace"] != ns {
							t.Errorf("%s: %s looks for Deployment %s in namespace %q, it is in %q", r.Alert, metric, v, labels["namespace"], ns)
						}
					case "namespace":
					case "lease":
						if v != lease {
							t.Errorf("%s: %s names Lease %q; the actor's is %q", r.Alert, metric, v, lease)
						}
					default:
						t.Errorf("%s: %s matches label %s, which no check here ties to deploy/", r.Alert, metric, k)
					}
				}
				if metric == "kube_lease_renew_time" && (labels["lease"] == "" || labels["namespace"] != "") {
					t.Errorf("%s: kube_lease_renew_time has only the lease label: %s", r.Alert, s[0])
				}
			}
		}
	}
	for alert, group := range map[string]string{
		"KubehzObserverNotReady": "kubehz-observer", "KubehzObserverMissing": "kubehz-observer",
		"KubehzActorNoLeader": "kubehz-actor", "KubehzActorUnavailable": "kubehz-actor",
	} {
		if alerts[alert] != group {
			t.Errorf("alert %s is in group %q, want %q (the actor's may be loaded without the observer's)", alert, alerts[alert], group)
		}
	}
}

// TestMonitoring_NoLeaderWaitsLongerThanATakeover: a standby takes the Lease
// 15 seconds (the lease duration) after the leader stops renewing, so a
// staleness threshold under two lease durations would page on every
// ordinary handover.
func TestMonitoring_NoLeaderWaitsLongerThanATakeover(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), "deploy", "monitoring", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`time\(\) - kube_lease_renew_time\{[^}]*\} > (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no `time() - kube_lease_renew_time{…} > N` in alerts.yaml")
	}
	if n, _ := strconv.Atoi(string(m[1])); n < 2*15 {
		t.Errorf("the Lease is stale after %ds, under two lease durations (30s)", n)
	}
}

// TestMonitoring_ReadmeListsEveryEventReasonTheActorEmits reads the reasons
// from the actor's code (every "Kubehz…" string literal; one on a line with
// a bare true is recorded as a Warning, as every Warning call site passes
// it) and holds the README's Monitoring table and kubectl recipe to them.
func TestMonitoring_ReadmeListsEveryEventReasonTheActorEmits(t *testing.T) {
	inCode := map[string]string{} // reason -> Normal or Warning
	reason := regexp.MustCompile(`"(Kubehz[A-Z][A-Za-z]*)"`)
	bareTrue := regexp.MustCompile(`\btrue\b`)
	component := false
	err := filepath.WalkDir(filepath.Join(root(t), "actor"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		component = component || strings.Contains(string(b), `Component: "kubehz-actor"`)
		for line := range strings.SplitSeq(string(b), "\n") {
			for _, m := range reason.FindAllStringSubmatch(line, -1) {
				if bareTrue.MatchString(line) {
					inCode[m[1]] = "Warning"
				} else if inCode[m[1]] == "" {
					inCode[m[1]] = "Normal"
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inCode) == 0 || !component {
		t.Fatalf("found no Event reasons (%v) or no source component kubehz-actor in actor/", inCode)
	}

	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "\n## Monitoring\n")
	if start < 0 {
		t.Fatal("README has no Monitoring section")
	}
	section = section[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	row := regexp.MustCompile("(?m)^\\| `(Kubehz[A-Za-z]+)` \\| (Warning|Normal) \\|")
	inReadme := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		inReadme[m[1]] = m[2]
	}
	if !maps.Equal(inReadme, inCode) {
		t.Errorf("README Monitoring lists reasons %v; the actor emits %v", inReadme, inCode)
	}
	for _, want := range []string{"source=kubehz-actor", "deploy/monitoring/alerts.yaml",
		"KubehzObserverNotReady", "KubehzObserverMissing", "KubehzActorNoLeader", "KubehzActorUnavailable"} {
		if !strings.Contains(section, want) {
			t.Errorf("README Monitoring does not say %q", want)
		}
	}
}

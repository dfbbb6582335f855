package desired

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
)

// records returns every JSON log line with the given message.
func records(t *testing.T, logs, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

func TestPoller_PullLogShowsArmedHealingOnlyWithBothBits(t *testing.T) {
	tests := []struct {
		name              string
		execution, enable bool
		armed             bool
	}{
		{"both bits", true, true, true},
		{"execution only", true, false, false},
		{"enabled only", false, true, false},
		{"neither", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := fmt.Sprintf(`{"revision":12,"kubernetesVersion":"v1.35.6",`+
					`"workerPools":[{"name":"workers-a","machineType":"cpx31","desiredReplicas":3},`+
					`{"name":"workers-b","machineType":"cpx31","desiredReplicas":1}],`+
					`"execution":{"scaling":true,"upgrades":false,"healing":%t},`+
					`"healing":{"enabled":%t,"maxUnhealthy":2,"nodeStartupTimeoutSeconds":600,`+
					`"unhealthyAfterSeconds":300,"cooldownSeconds":900}}`, tt.execution, tt.enable)
				h := start(t)
				h.serve(ok(`"12-101"`, body))
				h.run.Stop()

				recs := records(t, h.logs.String(), "Desired state pulled")
				if len(recs) != 1 {
					t.Fatalf("%d pull log lines, want 1", len(recs))
				}
				want := map[string]any{
					"level": "INFO", "revision": 12.0, "pools": 2.0, "scaling": true, "upgrades": false,
					"healing": tt.armed, "maxUnhealthy": 2.0, "unhealthyAfterSeconds": 300.0, "cooldownSeconds": 900.0,
				}
				for k, v := range want {
					if recs[0][k] != v {
						t.Errorf("log %s = %v, want %v", k, recs[0][k], v)
					}
				}
			})
		})
	}
}

func TestPoller_RefusalLogsLoudly(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		level string
		msg   string
	}{
		{"401", failure(status(401)), "ERROR", "Desired state rejected: agent token not accepted; acting stopped, reports cleared, retrying after full backoff"},
		{"403", failure(status(403)), "ERROR", "Desired state rejected: agent token not accepted; acting stopped, reports cleared, retrying after full backoff"},
		{"404", failure(status(404)), "ERROR", "Desired state refused by the platform; acting stopped, reports cleared"},
		{"invalid document", ok(`"1-000"`, `{"revision":-1}`), "ERROR", "Desired state document rejected; acting stopped, reports cleared"},
		{"500", failure(status(500)), "WARN", "Desired state fetch failed, keeping reports and retrying"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				h.serve(tt.reply)
				h.run.Stop()

				recs := records(t, h.logs.String(), tt.msg)
				if len(recs) != 1 {
					t.Fatalf("want one %q line, got logs:\n%s", tt.msg, h.logs.String())
				}
				if recs[0]["level"] != tt.level || recs[0]["err"] == nil || recs[0]["wait"] != "1s" {
					t.Errorf("log = %v, want level %s, an err and wait 1s", recs[0], tt.level)
				}
			})
		})
	}
}

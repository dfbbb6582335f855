package kube

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadAudit_OneRecordPerRequestFromTheOffset(t *testing.T) {
	skipped := `{"auditID":"s","stage":"ResponseComplete","verb":"list"}` + "\n"
	lines := []string{
		`{"auditID":"g","stage":"RequestReceived","verb":"get"}`,
		`{"auditID":"g","stage":"ResponseComplete","verb":"get"}`,
		// Opened, then ended: counted once, when it opened.
		`{"auditID":"w","stage":"ResponseStarted","verb":"watch"}`,
		`{"auditID":"w","stage":"ResponseComplete","verb":"watch"}`,
		// Refused before it streamed: it never started, and counts.
		`{"auditID":"r","stage":"ResponseComplete","verb":"watch","responseStatus":{"code":403}}`,
		// Still open when read.
		`{"auditID":"o","stage":"ResponseStarted","verb":"watch"}`,
		`{"auditID":"p","stage":"Resp`, // a line still being written
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(skipped+strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	events, err := ReadAudit(path, int64(len(skipped)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.AuditID+" "+e.Stage)
	}
	want := []string{"g ResponseComplete", "w ResponseStarted", "r ResponseComplete", "o ResponseStarted"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAuditEvent_ProcessIsTheActorReplicaOfTheUserAgent(t *testing.T) {
	for ua, want := range map[string]string{
		"actor/v1.2.0 (linux/amd64) kubernetes/abc actor/actor-7d9f-x2b4c_0f0f": "actor-7d9f-x2b4c_0f0f",
		"observer/v1.2.0 (linux/amd64) kubernetes/abc":                          "",
		"actor/v1.2.0": "",
	} {
		if got := (AuditEvent{UserAgent: ua}).Process(); got != want {
			t.Errorf("%q: got %q, want %q", ua, got, want)
		}
	}
}

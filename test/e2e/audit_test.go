package e2e

import (
	"testing"
	"time"

	"kubehz.dev/agent/test/kube"
)

var mutating = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// actorRequests reads the requests the actor's identity made since, from the suite's audit log.
func actorRequests(t *testing.T, since time.Time) []kube.AuditEvent {
	t.Helper()
	return auditRequests(t, suite.auditLog, kube.ActorUser, since)
}

// auditRequests reads the requests user made since, from log.
func auditRequests(t *testing.T, log, user string, since time.Time) []kube.AuditEvent {
	t.Helper()
	all, err := kube.ReadAudit(log, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []kube.AuditEvent
	for _, e := range all {
		if e.User.Username == user && !e.RequestReceived.Before(since) {
			out = append(out, e)
		}
	}
	return out
}

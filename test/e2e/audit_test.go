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

// receivedAt is when the apiserver received the first request since since
// that match accepts, by its audit log's clock: the instant a test's own
// request took effect, to measure a promised bound from. It waits for the
// record, which the apiserver writes as the request completes.
func receivedAt(t *testing.T, since time.Time, what string, match func(kube.AuditEvent) bool) time.Time {
	t.Helper()
	var at time.Time
	kube.WaitUntil(t, "the audit record of "+what, func() bool {
		all, err := kube.ReadAudit(suite.auditLog, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			if !e.RequestReceived.Before(since) && match(e) {
				at = e.RequestReceived
				return true
			}
		}
		return false
	})
	return at
}

// request matches one verb on one named object.
func request(verb, resource, name string) func(kube.AuditEvent) bool {
	return func(e kube.AuditEvent) bool {
		return e.Verb == verb && e.Resource() == resource && e.ObjectRef.Name == name
	}
}

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// auditEvent is the part of an apiserver audit record the tests read.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource, Namespace, Name, APIGroup, Subresource string
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	ResponseStatus  *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

const (
	actorUser    = "system:serviceaccount:kubehz-system:kubehz-actor"
	observerUser = "system:serviceaccount:kubehz-system:kubehz-observer"
)

var mutating = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// actorRequests reads the completed requests the actor's identity made
// since, from the suite's audit log.
func actorRequests(t *testing.T, since time.Time) []auditEvent {
	t.Helper()
	return auditRequests(t, suite.auditLog, actorUser, since)
}

// auditRequests reads the completed requests, and the opened watches, of
// user since, from log.
func auditRequests(t *testing.T, log, user string, since time.Time) []auditEvent {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		// A watch stays open: its ResponseStarted record is the one that
		// says it was made.
		done := e.Stage == "ResponseComplete" || e.Stage == "ResponseStarted" && e.Verb == "watch"
		if done && e.User.Username == user && !e.RequestReceived.Before(since) {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// process is the actor replica a request came from, by its User-Agent.
func (e auditEvent) process() string {
	_, id, _ := strings.Cut(e.UserAgent, " actor/")
	return id
}

func (e auditEvent) resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Resource
}

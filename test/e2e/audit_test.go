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
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
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

const actorUser = "system:serviceaccount:kubehz-system:kubehz-actor"

var mutating = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// auditEvents reads the completed requests the actor's identity made since.
func actorRequests(t *testing.T, since time.Time) []auditEvent {
	t.Helper()
	f, err := os.Open(suite.auditLog)
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
		if e.Stage == "ResponseComplete" && e.User.Username == actorUser && !e.RequestReceived.Before(since) {
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

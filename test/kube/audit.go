package kube

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The agent's identities as deploy/ creates them and the audit log names them.
const (
	ObserverUser = "system:serviceaccount:" + AgentNamespace + ":" + ObserverServiceAccount
	ActorUser    = "system:serviceaccount:" + AgentNamespace + ":" + ActorServiceAccount
)

// AuditFlags writes policy into dir and returns the kube-apiserver flags
// that log what it selects to the returned file. Writes block: a request's
// record is written before its answer, so the log is complete the moment a
// process has stopped.
func AuditFlags(dir, policy string) (flags map[string][]string, log string, err error) {
	file := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
		return nil, "", err
	}
	log = filepath.Join(dir, "audit.log")
	return map[string][]string{
		"audit-policy-file": {file}, "audit-log-path": {log}, "audit-log-mode": {"blocking"},
	}, log, nil
}

// AuditEvent is the part of an apiserver audit record the tests read.
type AuditEvent struct {
	AuditID    string `json:"auditID"`
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	// ImpersonatedUser is who the user acted as, if anyone.
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource, Namespace, Name, APIGroup, Subresource string
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
	// Stage is when this record's stage was reached: for a completed
	// request's last record, when its response was complete.
	StageTimestamp time.Time `json:"stageTimestamp"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// ReadAudit returns one record for each request logged from offset (bytes)
// on: a completed request's last record, and a watch's first, made when its
// stream opened (it stays open; its ResponseComplete comes when it ends and
// would count it twice). A watch refused before it streamed has only the
// ResponseComplete, and that one counts.
func ReadAudit(path string, offset int64) ([]AuditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []AuditEvent
	opened := map[string]bool{} // watches seen streaming, by audit ID
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e AuditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line the apiserver is still writing
		}
		watch := e.Verb == "watch"
		switch {
		case watch && e.Stage == "ResponseStarted":
			opened[e.AuditID] = true
			out = append(out, e)
		case watch && e.Stage == "ResponseComplete" && opened[e.AuditID]:
			delete(opened, e.AuditID)
		case e.Stage == "ResponseComplete":
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// Actor is who made the request: the impersonated user if there was one,
// else the authenticated user.
func (e AuditEvent) Actor() string {
	if e.ImpersonatedUser != nil {
		return e.ImpersonatedUser.Username
	}
	return e.User.Username
}

// Resource is the resource a request was about, "" for a non-resource
// request such as discovery.
func (e AuditEvent) Resource() string {
	if e.ObjectRef == nil {
		return ""
	}
	return e.ObjectRef.Resource
}

// Code is the HTTP status the request was answered with, 0 if the record
// has none.
func (e AuditEvent) Code() int {
	if e.ResponseStatus == nil {
		return 0
	}
	return e.ResponseStatus.Code
}

// Process is the actor replica that made a request, "<pod>_<random>", from
// the User-Agent it sends ("… actor/<pod>_<random>"); "" for another client.
func (e AuditEvent) Process() string {
	_, id, _ := strings.Cut(e.UserAgent, " actor/")
	return id
}

package bench

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// auditEvent is the part of an apiserver audit record the harness reads.
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
}

// readAudit returns the agent's requests logged from offset on: every
// completed request, and every watch when its stream opened (the
// ResponseStarted record; its ResponseComplete comes when it ends and would
// count it twice).
func readAudit(path string, offset int64) ([]auditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue // a line the apiserver is still writing
		}
		watch := e.Verb == "watch"
		if watch && e.Stage == "ResponseStarted" || !watch && e.Stage == "ResponseComplete" {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// target is what a request was about: group/resource[/subresource] ("pods"
// for the core group), or the path of a non-resource request such as a
// discovery GET of /apis/cluster.k8s.io/v1alpha1.
func (e auditEvent) target() string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		path, _, _ := strings.Cut(e.RequestURI, "?")
		return path
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	if e.ObjectRef.APIGroup != "" {
		r = e.ObjectRef.APIGroup + "/" + r
	}
	return r
}

// by tells which process made a request: the observer by its identity, an
// actor replica by the pod name in its User-Agent ("… actor/<pod>_<hex>").
func (e auditEvent) by(pods map[string]string) string {
	switch e.User.Username {
	case observerUser:
		return "observer"
	case actorUser:
		for pod, role := range pods {
			if strings.Contains(e.UserAgent, "actor/"+pod+"_") {
				return role
			}
		}
		return "actor"
	}
	return ""
}

// requestRow counts one process' requests of one verb and target, before
// the steady window (start-up, initial sync) and in it.
type requestRow struct {
	Process string `json:"process"`
	Verb    string `json:"verb"`
	Target  string `json:"target"`
	Before  int    `json:"before"`
	Window  int    `json:"window"`
}

// tallyRequests sorts events into rows; requests after the window (the
// shutdown) are left out.
func tallyRequests(events []auditEvent, pods map[string]string, from, to time.Time) []requestRow {
	type key struct{ process, verb, target string }
	counts := map[key]*requestRow{}
	for _, e := range events {
		if e.RequestReceived.After(to) {
			continue
		}
		k := key{e.by(pods), e.Verb, e.target()}
		if k.process == "" {
			continue
		}
		r := counts[k]
		if r == nil {
			r = &requestRow{Process: k.process, Verb: k.verb, Target: k.target}
			counts[k] = r
		}
		if e.RequestReceived.Before(from) {
			r.Before++
		} else {
			r.Window++
		}
	}
	rows := make([]requestRow, 0, len(counts))
	for _, r := range counts {
		rows = append(rows, *r)
	}
	slices.SortFunc(rows, func(a, b requestRow) int {
		return cmp.Or(cmp.Compare(a.Process, b.Process), cmp.Compare(a.Verb, b.Verb), cmp.Compare(a.Target, b.Target))
	})
	return rows
}

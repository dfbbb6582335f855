package bench

import (
	"cmp"
	"os"
	"slices"
	"strings"
	"time"

	"kubehz.dev/agent/test/kube"
)

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
func target(e kube.AuditEvent) string {
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
// actor replica by the pod name in its User-Agent.
func by(e kube.AuditEvent, pods map[string]string) string {
	switch e.User.Username {
	case kube.ObserverUser:
		return "observer"
	case kube.ActorUser:
		for pod, role := range pods {
			if strings.HasPrefix(e.Process(), pod+"_") {
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
func tallyRequests(events []kube.AuditEvent, pods map[string]string, from, to time.Time) []requestRow {
	type key struct{ process, verb, target string }
	counts := map[key]*requestRow{}
	for _, e := range events {
		if e.RequestReceived.After(to) {
			continue
		}
		k := key{by(e, pods), e.Verb, target(e)}
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

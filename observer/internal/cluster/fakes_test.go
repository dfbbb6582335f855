package cluster

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	restfake "k8s.io/client-go/rest/fake"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// versionServer answers /version from a list of answers, the last one
// repeated, and notes when each read came.
type versionServer struct {
	mu      sync.Mutex
	answers []string // a body, or "" for a 503
	reads   []time.Duration
	start   time.Time
}

func (s *versionServer) client() *restfake.RESTClient {
	return &restfake.RESTClient{
		NegotiatedSerializer: serializer.NewCodecFactory(runtime.NewScheme()).WithoutConversion(),
		Client: restfake.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reads = append(s.reads, time.Since(s.start))
			body := s.answers[min(len(s.reads), len(s.answers))-1]
			if body == "" {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{},
					Body: io.NopCloser(strings.NewReader(""))}, nil
			}
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(body))}, nil
		}),
	}
}

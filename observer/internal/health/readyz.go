package health

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// Readyz is the apiserver's own verdict on its readiness checks.
type Readyz struct {
	Passed bool
	// Checks maps a check name to whether it passed. Excluded checks are left
	// out: the apiserver did not run them, so they say nothing.
	Checks map[string]bool
}

// errNoVerdict marks a body that is not a readyz report at all.
var errNoVerdict = errors.New("no readyz verdict line")

// ParseReadyz reads the body of GET /readyz?verbose: one line per check,
// "[+]name ok", "[+]name excluded: ok" or "[-]name failed: reason withheld",
// then "readyz check passed" or "readyz check failed". A bare "ok" is the
// non-verbose answer of a ready apiserver. Anything without a verdict is
// rejected rather than read as either.
func ParseReadyz(body []byte) (Readyz, error) {
	if string(bytes.TrimSpace(body)) == "ok" {
		return Readyz{Passed: true, Checks: map[string]bool{}}, nil
	}
	r := Readyz{Checks: map[string]bool{}}
	verdict := false
	lines := bufio.NewScanner(bytes.NewReader(body))
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case line == "readyz check passed":
			r.Passed, verdict = true, true
		case line == "readyz check failed":
			r.Passed, verdict = false, true
		case strings.HasPrefix(line, "[+]"):
			name, rest, _ := strings.Cut(line[len("[+]"):], " ")
			if name != "" && rest == "ok" {
				r.Checks[name] = true
			}
		case strings.HasPrefix(line, "[-]"):
			name, _, _ := strings.Cut(line[len("[-]"):], " ")
			if name != "" {
				r.Checks[name] = false
			}
		}
	}
	if err := lines.Err(); err != nil {
		return Readyz{}, fmt.Errorf("read readyz body: %w", err)
	}
	if !verdict {
		return Readyz{}, errNoVerdict
	}
	return r, nil
}

// probeReadyz asks the apiserver for its verbose readiness report. A failing
// apiserver answers 500 with the same report, which is read like a 200; any
// other failure (transport, 403, a body that is no report) is an error.
func probeReadyz(ctx context.Context, client rest.Interface) (*Readyz, error) {
	if client == nil {
		return nil, errors.New("no REST client for /readyz")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	body, err := client.Get().AbsPath("/readyz").Param("verbose", "").DoRaw(ctx)
	if err != nil && !isInternalError(err) {
		return nil, fmt.Errorf("get /readyz: %w", err)
	}
	r, perr := ParseReadyz(body)
	if perr != nil {
		if err != nil {
			return nil, fmt.Errorf("get /readyz: %w", err)
		}
		return nil, fmt.Errorf("get /readyz: %w", perr)
	}
	return &r, nil
}

func isInternalError(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == http.StatusInternalServerError
}

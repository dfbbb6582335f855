package desired

import (
	"errors"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"kubehz.dev/agent/shared/platform"
)

func etags(calls ...call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.etag
	}
	return out
}

func TestPoller_SendsIfNoneMatchOnlyWithCachedETag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		first := h.serve(ok(`"7-101"`, doc(7)))
		h.waits(interval)
		second := h.serve(ok("", doc(8))) // a 200 without ETag empties the cache
		h.waits(interval)
		third := h.serve(notModified())

		if !first.at.Equal(t0) {
			t.Errorf("first poll at +%s, want at once", first.at.Sub(t0))
		}
		if got, want := etags(first, second, third), []string{"", `"7-101"`, ""}; !reflect.DeepEqual(got, want) {
			t.Errorf("If-None-Match sent = %q, want %q", got, want)
		}
	})
}

func TestPoller_EchoesETagVerbatim(t *testing.T) {
	for _, etag := range []string{`"7-101"`, `"3-10"`, `utterly/opaque token=42`, `W/"7-101"`} {
		t.Run(etag, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				h.serve(ok(etag, doc(7)))
				h.waits(interval)
				if c := h.serve(notModified()); c.etag != etag {
					t.Errorf("If-None-Match = %q, want %q byte for byte", c.etag, etag)
				}
			})
		})
	}
}

func TestPoller_ETagFormatChangeCostsOneFullResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		c1 := h.serve(ok(`"3-10"`, doc(3)))
		h.waits(interval)
		// The server now speaks three bits: same revision, new tag, one 200.
		c2 := h.serve(ok(`"3-100"`, doc(3)))
		h.waits(interval)
		c3 := h.serve(notModified())
		h.waits(interval)
		c4 := h.serve(notModified())

		if got, want := etags(c1, c2, c3, c4), []string{"", `"3-10"`, `"3-100"`, `"3-100"`}; !reflect.DeepEqual(got, want) {
			t.Errorf("If-None-Match sent = %q, want %q", got, want)
		}
		if got := h.exec.revisions(); !reflect.DeepEqual(got, []int64{3, 3}) {
			t.Errorf("executed revisions %v, want [3 3]: one per 200, none per 304", got)
		}
	})
}

// TestPoller_RefusalClearsAndOutageKeeps pins docs/contract.md#g-1 closed: when
// the platform answers but authorizes nothing, the reports go and nothing
// cached can be acted on later; when it cannot answer, the reports stay true
// and the cached document is still the last word. Neither acts at the failure.
func TestPoller_RefusalClearsAndOutageKeeps(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		clear bool
	}{
		{"401", failure(status(401)), true},
		{"403", failure(status(403)), true},
		{"400", failure(status(400)), true},
		{"404", failure(status(404)), true},
		{"410", failure(status(410)), true},
		{"garbage body", ok(`"8-101"`, `{"revision":`), true},
		{"negative revision", ok(`"8-101"`, `{"revision":-1}`), true},
		{"204 empty body", ok("", ""), true},
		{"valid document as text/html", reply{resp: platform.DesiredResponse{ETag: `"8-101"`, Body: []byte(doc(8)), ContentType: "text/html"}}, true},
		{"valid document with no Content-Type", reply{resp: platform.DesiredResponse{ETag: `"8-101"`, Body: []byte(doc(8))}}, true},
		{"500", failure(status(500)), false},
		{"503", failure(status(503)), false},
		{"429", failure(status(429)), false},
		{"408", failure(status(408)), false},
		{"302 refused redirect", failure(&platform.RedirectError{Code: 302}), false},
		{"transport error", failure(errors.New("dial tcp: connection refused")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, true) // the first pass asks for a retry
				h.serve(ok(`"7-101"`, doc(7)))
				h.waits(interval)
				h.serve(tt.reply)
				if got := h.exec.revisions(); !reflect.DeepEqual(got, []int64{7}) {
					t.Fatalf("executed revisions %v after the failure, want [7]", got)
				}
				h.waits(time.Second)
				// A 304 now may act only on a document the platform still stands by.
				after := h.serve(notModified())

				wantETag, wantRevisions, wantClears := `"7-101"`, []int64{7, 7}, 0
				if tt.clear {
					wantETag, wantRevisions, wantClears = "", []int64{7}, 1
				}
				if after.etag != wantETag {
					t.Errorf("If-None-Match after the failure = %q, want %q", after.etag, wantETag)
				}
				if got := h.exec.revisions(); !reflect.DeepEqual(got, wantRevisions) {
					t.Errorf("executed revisions %v, want %v", got, wantRevisions)
				}
				if got := h.exec.clears(); len(got) != wantClears || (wantClears == 1 && got[0] == "") {
					t.Errorf("Clear calls %q, want %d with a reason", got, wantClears)
				}
			})
		})
	}
}

func TestPoller_NotModifiedDoesNotActAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serveSteady(ok(`"7-101"`, doc(7)), notModified())
		h.serve(notModified())

		if got := h.exec.revisions(); h.calls() != 3 || !reflect.DeepEqual(got, []int64{7}) {
			t.Errorf("%d GETs executed %v, want 3 GETs and one execution of revision 7", h.calls(), got)
		}
	})
}

// A document served without an ETag leaves the next request unconditional,
// so a 304 to it stands for no document: even armed healing, which asks
// for a pass on every 304 (TestPoller_RetryActsAgainOnlyWhileAsked, the
// control), does not act on the cached one.
func TestPoller_NotModifiedToAnUnconditionalRequestActsOnNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, true, true, true)
		h.serve(ok("", doc(7)))
		for range 2 {
			h.waits(interval)
			if req := h.serve(notModified()); req.etag != "" {
				t.Fatalf("If-None-Match = %q after a document without an ETag", req.etag)
			}
		}
		if got := h.exec.revisions(); !reflect.DeepEqual(got, []int64{7}) {
			t.Errorf("executed revisions %v, want [7]: a 304 to an unconditional request refers to nothing", got)
		}
	})
}

func TestPoller_NewETagActsOnNewDocument(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serveSteady(ok(`"7-101"`, doc(7)), notModified(), ok(`"8-101"`, doc(8)))
		after := h.serve(notModified())

		if got := h.exec.revisions(); !reflect.DeepEqual(got, []int64{7, 8}) {
			t.Errorf("executed revisions %v, want [7 8]", got)
		}
		if after.etag != `"8-101"` {
			t.Errorf("If-None-Match = %q, want the new tag", after.etag)
		}
	})
}

func TestPoller_RepeatedAuthFailuresBackOffInFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serve(failure(status(401)))
		h.waits(time.Second)
		h.serve(failure(status(401)))
		h.waits(2 * time.Second)
		h.serve(failure(status(401)))
		h.run.Stop()

		if n := h.bo.Attempt(); n != 3 {
			t.Errorf("backoff attempt = %d, want 3", n)
		}
		if got := h.exec.revisions(); len(got) != 0 {
			t.Errorf("executed revisions %v, want none", got)
		}
	})
}

func TestPoller_AnswerResetsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serve(failure(status(500)))
		h.waits(time.Second)
		h.serve(failure(status(500)))
		h.waits(2 * time.Second)
		h.serve(ok(`"7-101"`, doc(7)))
		h.waits(interval)
		h.serve(failure(status(500)))
		h.waits(time.Second)
		h.serve(notModified())
		h.waits(interval)
		h.serve(failure(status(500)))
		h.waits(time.Second)
	})
}

func TestPoller_RetryActsAgainOnlyWhileAsked(t *testing.T) {
	tests := []struct {
		name    string
		retries []bool
		want    []int64
	}{
		{"no retry: one pass", nil, []int64{7}},
		{"transient failure: once more on the next 304, then stops", []bool{true, false}, []int64{7, 7}},
		{"armed healing: every 304", []bool{true, true, true}, []int64{7, 7, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, tt.retries...)
				h.serve(ok(`"7-101"`, doc(7)))
				for range 2 {
					h.waits(interval)
					h.serve(notModified())
				}
				if got := h.exec.revisions(); !reflect.DeepEqual(got, tt.want) {
					t.Errorf("executed revisions %v, want %v", got, tt.want)
				}
				h.exec.mu.Lock()
				defer h.exec.mu.Unlock()
				for i, d := range h.exec.executed[1:] {
					if !reflect.DeepEqual(d, h.exec.executed[0]) {
						t.Errorf("pass %d ran on %+v, want the cached %+v", i+2, d, h.exec.executed[0])
					}
				}
			})
		})
	}
}

func TestPoller_RetryAfterStretchesFailureWait(t *testing.T) {
	tests := []struct {
		name string
		err  error
		wait time.Duration
	}{
		{"429 asks 10 s", &platform.StatusError{Code: 429, RetryAfter: 10 * time.Second}, 10 * time.Second},
		{"503 asks less than the backoff", &platform.StatusError{Code: 503, RetryAfter: 500 * time.Millisecond}, time.Second},
		{"503 asks too long", &platform.StatusError{Code: 503, RetryAfter: time.Hour}, 5 * time.Minute},
		{"401 without Retry-After", status(401), time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				h.serve(failure(tt.err))
				h.waits(tt.wait)
				h.next().reply <- notModified()
			})
		})
	}
}

func TestPoller_RunReturnsPromptlyOnCancel(t *testing.T) {
	tests := []struct {
		name  string
		setup func(h *harness)
	}{
		{"fetch in flight", func(h *harness) { h.next() }},
		{"waiting out the interval", func(h *harness) { h.serve(ok(`"7-101"`, doc(7))) }},
		{"waiting out an auth backoff", func(h *harness) { h.serve(failure(status(401))) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				tt.setup(h)
				h.run.Stop()
			})
		})
	}
}

// Every tick that runs no pass flushes, so a report write that failed, or
// a ConfigMap emptied since, is written again on the next tick whatever the
// platform answers: a 304, an outage, a 429. A tick that executes or clears
// publishes by itself.
func TestPoller_EveryTickWithoutAPassFlushesTheReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serveSteady(ok(`"7-101"`, doc(7)), notModified())
		h.serve(failure(status(503)))
		h.waits(time.Second)
		h.serve(failure(status(429)))
		h.waits(2 * time.Second)
		h.serve(failure(errors.New("connection reset")))
		h.waits(4 * time.Second)
		h.serve(notModified())
		h.waits(interval)
		h.serve(failure(status(403)))

		want := []string{"execute", "flush", "flush", "flush", "flush", "flush", "clear"}
		if got := h.exec.calls(); !reflect.DeepEqual(got, want) {
			t.Errorf("executor calls %q, want %q", got, want)
		}
	})
}

func TestPoller_TellsHowEveryRequestEnded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.serveSteady(ok(`"7-101"`, doc(7)), notModified())
		h.serve(failure(status(503)))
		h.waits(time.Second)
		h.serve(failure(errors.New("connection reset")))
		h.waits(2 * time.Second)
		h.serve(ok(`"8"`, `{"revision":`))

		want := []string{"new document", "unchanged", "HTTP 503", "error", "invalid document"}
		if got := h.outcomes(); !reflect.DeepEqual(got, want) {
			t.Errorf("outcomes %q, want %q", got, want)
		}
	})
}

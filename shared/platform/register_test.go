package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestRegistrar_PostsBodyWithoutAnyCredential(t *testing.T) {
	var got struct {
		method, path, auth, agent, contentType string
		body                                   []byte
	}
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path = r.Method, r.URL.EscapedPath()
		got.auth, got.agent = r.Header.Get("Authorization"), r.Header.Get("User-Agent")
		got.contentType = r.Header.Get("Content-Type")
		got.body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
	})
	reg, err := NewRegistrar(mustParse(t, srv.URL+"/prefix/"), Options{UserAgent: "kubehz-agent/1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.CloseIdleConnections)
	if err := reg.Register(context.Background(), []byte(`{"clusterId":"c1"}`), ""); err != nil {
		t.Fatalf("Register: %v", err)
	}
	if got.method != http.MethodPost || got.path != "/prefix/api/clusters/agent-register" {
		t.Errorf("sent %s %s", got.method, got.path)
	}
	if got.auth != "" {
		t.Errorf("registration carried Authorization %q", got.auth)
	}
	if got.agent != "kubehz-agent/1.2.3" || got.contentType != "application/json" {
		t.Errorf("User-Agent %q, Content-Type %q", got.agent, got.contentType)
	}
	if string(got.body) != `{"clusterId":"c1"}` {
		t.Errorf("body %s", got.body)
	}
}

func TestRegistrar_ErrorAnswerIsStatusErrorAndLogMasksTheBindSecret(t *testing.T) {
	const bind = "bind-s3cr3t"
	reg, logged := debugRegistrar(t, http.StatusConflict, `{"error":"conflict","echo":"`+bind+`"}`)
	err := reg.Register(context.Background(), []byte(`{}`), bind)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusConflict {
		t.Fatalf("want a 409 StatusError, got %v", err)
	}
	if strings.Contains(logged.String(), bind) || !strings.Contains(logged.String(), "<redacted>") {
		t.Errorf("debug log does not mask the bind secret: %s", logged.String())
	}
}

// A platform that echoes the bind secret into a redirect's path, escaped or
// not, must not put it in the error the register command logs.
func TestRegistrar_RedirectErrorWithholdsAPathHoldingTheBindSecret(t *testing.T) {
	const bind = "bind/s3cr3t"
	for _, path := range []string{"/moved/bind/s3cr3t", "/moved/bind%2Fs3cr3t"} {
		srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", path)
			w.WriteHeader(http.StatusFound)
		})
		reg, err := NewRegistrar(mustParse(t, srv.URL), Options{UserAgent: "kubehz-agent/1.2.3"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(reg.CloseIdleConnections)
		err = reg.Register(context.Background(), []byte(`{}`), bind)
		var re *RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("%s: err = %v, want a RedirectError", path, err)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "<withheld: it holds the credential>") {
			t.Errorf("%s: the error does not withhold the path: %q", path, msg)
		}
	}
}

func TestNewRegistrar_RefusesPlainHTTPToAPublicHost(t *testing.T) {
	if _, err := NewRegistrar(mustParse(t, "http://api.kubehz.dev"), Options{}); err == nil {
		t.Error("a registrar accepted http to a public host")
	}
}

// A platform that echoes the request body sends the bind secret as JSON
// escapes it: that form is masked too.
func TestRegistrar_LogMasksTheBindSecretAsAnEchoedJSONBodyEscapesIt(t *testing.T) {
	const bind = `b<1>n&d"s3cr3t\`
	echoed, _ := json.Marshal(map[string]string{"bindSecret": bind})
	reg, logged := debugRegistrar(t, http.StatusBadRequest, `{"error":"bad","request":`+string(echoed)+`}`)
	_ = reg.Register(context.Background(), []byte(`{}`), bind)
	if strings.Contains(logged.String(), "s3cr3t") || !strings.Contains(logged.String(), "<redacted>") {
		t.Errorf("debug log does not mask the escaped bind secret: %s", logged.String())
	}
}

// A bind secret the read budget cut short is masked as the whole one is.
func TestRegistrar_LogMasksABindSecretCutByTheReadBudget(t *testing.T) {
	const bind = "bind-s3cr3t"
	reg, logged := debugRegistrar(t, http.StatusBadRequest, strings.Repeat("\xff", 4<<10-6)+bind)
	_ = reg.Register(context.Background(), []byte(`{}`), bind)
	if !strings.Contains(logged.String(), `"body":"?<redacted>"`) {
		t.Errorf("debug log does not mask the cut bind secret: %s", logged.String())
	}
}

// debugRegistrar is a registrar logging at debug level to the buffer it
// returns, posting to a server that answers every request with code and
// body.
func debugRegistrar(t *testing.T, code int, body string) (*Registrar, *bytes.Buffer) {
	t.Helper()
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	})
	var logged bytes.Buffer
	reg, err := NewRegistrar(mustParse(t, srv.URL),
		Options{Logger: slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.CloseIdleConnections)
	return reg, &logged
}

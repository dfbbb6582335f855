package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"kubehz.dev/agent/test/platformsim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun_PrintsURLThenOneLinePerBeat(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	out, stdout := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-cluster", "c1", "-token", "tok"}, stdout, io.Discard)
		stdout.Close()
	}()
	// The beat lines are written before the answer, so reading must not
	// wait for the request to return.
	lines := make(chan string)
	go func() {
		defer close(lines)
		for scan := bufio.NewScanner(out); scan.Scan(); {
			lines <- scan.Text()
		}
	}()
	url := <-lines
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want the URL", url)
	}

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	for _, token := range []string{"tok", "nope"} {
		req, _ := http.NewRequest(http.MethodPost, url+"/api/clusters/c1/heartbeat", strings.NewReader(`{"schema":2}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		line := <-lines
		if strings.Contains(line, token) {
			t.Errorf("line leaks the token: %q", line)
		}
		want := map[string]string{"tok": "400 rejected auth=ok", "nope": "401 rejected auth=wrong"}[token]
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for range lines {
	}
}

func TestRun_BadFlagsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"-nope"}, {"stray"}} {
		var usage usageError
		if err := run(t.Context(), args, io.Discard, io.Discard); !errors.As(err, &usage) {
			t.Errorf("run(%q) = %v, want a usage error", args, err)
		}
	}
}

func TestBeatLine_NamesTheFirstIssue(t *testing.T) {
	line := beatLine(platformsim.Request{
		Method: "POST", Status: 400, Token: "secret", Body: []byte("{}"),
		Payload: map[string]any{"nodes": nil},
		Issues:  []platformsim.Issue{{Path: "nodes", Message: "expected array, got null"}},
	})
	want := `0001-01-01T00:00:00Z POST 400 rejected auth=ok bytes=2 field=nodes issue="expected array, got null" issues=1`
	if line != want || strings.Contains(line, "secret") {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
}

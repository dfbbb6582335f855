package release

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// listenSymbols are the functions through which a Go program can accept a
// connection. The linker drops every function nothing calls, so a binary
// without any of them cannot listen, whatever its dependencies could do.
var listenSymbols = []string{
	"net.Listen", "net.ListenTCP", "net.ListenUDP", "net.ListenUnix", "net.ListenUnixgram",
	"net.ListenPacket", "net.ListenIP", "net.ListenMulticastUDP", "net.FileListener",
	"net.(*ListenConfig).Listen", "net.(*ListenConfig).ListenPacket",
	"net.(*TCPListener).Accept", "net.(*UnixListener).Accept",
	"net/http.ListenAndServe", "net/http.ListenAndServeTLS", "net/http.Serve", "net/http.ServeTLS",
	"net/http.(*Server).Serve", "net/http.(*Server).ListenAndServe", "net/http.(*Server).ServeTLS",
}

// TestBinaries_HaveNoListenerSymbols reads the symbol table of each binary,
// built as its Dockerfile builds it but unstripped: none may contain a way to
// listen. A planted program that does listen shows the check can fail.
func TestBinaries_HaveNoListenerSymbols(t *testing.T) {
	planted := filepath.Join(t.TempDir(), "planted")
	if err := os.MkdirAll(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package main\n\nimport \"net/http\"\n\nfunc main() { _ = http.ListenAndServe(\"127.0.0.1:0\", nil) }\n"
	write(t, filepath.Join(planted, "main.go"), src)
	write(t, filepath.Join(planted, "go.mod"), "module planted\n\ngo 1.26\n")
	if found := listeners(t, planted); len(found) == 0 {
		t.Fatal("the planted listener was not found: the check cannot fail")
	}
	for _, bin := range []string{"observer", "actor"} {
		if found := listeners(t, filepath.Join(root(t), bin)); len(found) > 0 {
			t.Errorf("%s links %v", bin, found)
		}
	}
}

// listeners builds the main package in dir and returns the listen symbols
// its symbol table holds.
func listeners(t *testing.T, dir string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", dir, err, b)
	}
	nm, err := exec.Command("go", "tool", "nm", out).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	want := map[string]bool{}
	for _, s := range listenSymbols {
		want[s] = true
	}
	var found []string
	sc := bufio.NewScanner(bytes.NewReader(nm))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && (f[1] == "T" || f[1] == "t") && want[f[2]] {
			found = append(found, f[2])
		}
	}
	return found
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

package release

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// What the agent's own code may never do. listen and serve accept
// connections; dial opens one; a default-client request goes anywhere.
var (
	forbiddenImports = []string{"os/exec", "plugin", "net/rpc", "net/http/httptest", "net/http/pprof", "expvar"}
	listenCalls      = []string{"Listen", "ListenTCP", "ListenUDP", "ListenUnix", "ListenUnixgram", "ListenPacket",
		"ListenIP", "ListenMulticastUDP", "FileListener", "ListenAndServe", "ListenAndServeTLS", "Serve", "ServeTLS"}
	dialCalls    = []string{"Dial", "DialContext", "DialTCP", "DialUDP", "DialIP", "DialUnix", "DialTimeout", "DialWithDialer"}
	requestCalls = []string{"NewRequest", "NewRequestWithContext"}
	// Package-level net/http helpers that send with the default client.
	defaultClientCalls = []string{"Get", "Head", "Post", "PostForm"}
)

// allowedOutbound names the only places that open a connection, each to a
// destination the operator configured: the observer's TLS handshake with
// the apiserver named by its kubeconfig (certificate expiry), and the
// platform client's requests to KUBEHZ_API_URL.
var allowedOutbound = map[string][]string{
	"observer/internal/health/certs.go": {"DialContext"},
	"shared/platform/send.go":           {"NewRequestWithContext"},
}

// TestSource_KeepsTheOutboundOnlyPromise reads every non-test Go file of
// the two binaries and shared/: no process execution, no listener, and
// connections only where allowedOutbound says. It first proves, on planted
// files, that it finds each kind of violation.
func TestSource_KeepsTheOutboundOnlyPromise(t *testing.T) {
	planted := map[string]string{
		"exec.go":    "package p\nimport \"os/exec\"\nvar _ = exec.Command\n",
		"listen.go":  "package p\nimport \"net\"\nfunc f() { net.Listen(\"tcp\", \":0\") }\n",
		"serve.go":   "package p\nimport \"net/http\"\nfunc f(s *http.Server) { s.ListenAndServe() }\n",
		"dial.go":    "package p\nimport \"net\"\nfunc f() { net.Dial(\"tcp\", \"10.0.0.1:80\") }\n",
		"request.go": "package p\nimport \"net/http\"\nfunc f() { http.NewRequest(\"GET\", \"https://elsewhere\", nil) }\n",
		"default.go": "package p\nimport h \"net/http\"\nfunc f() { h.Get(\"https://elsewhere\") }\n",
	}
	dir := t.TempDir()
	for name, src := range planted {
		write(t, filepath.Join(dir, name), src)
	}
	found := scan(t, dir, "")
	for name := range planted {
		if !slices.ContainsFunc(found, func(v string) bool { return strings.HasPrefix(v, name+":") }) {
			t.Errorf("the planted violation in %s was not found (found %v)", name, found)
		}
	}

	r := root(t)
	seen := map[string]bool{}
	for _, module := range []string{"observer", "actor", "shared"} {
		for _, v := range scan(t, filepath.Join(r, module), module) {
			file, call, _ := strings.Cut(v, ": ")
			name := strings.Fields(call)[0]
			if slices.Contains(allowedOutbound[file], name) {
				seen[file+" "+name] = true
				continue
			}
			t.Errorf("%s", v)
		}
	}
	// The allowlist must not outlive the code it vouches for.
	for file, calls := range allowedOutbound {
		for _, c := range calls {
			if !seen[file+" "+c] {
				t.Errorf("allowedOutbound lists %s in %s, which no longer calls it", c, file)
			}
		}
	}
}

// scan parses every non-test .go file under dir and lists violations as
// "path: what", path relative to dir and prefixed with prefix.
func scan(t *testing.T, dir, prefix string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(filepath.Join(prefix, rel))
		for _, v := range violations(f) {
			out = append(out, rel+": "+v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// violations lists the forbidden imports and calls of one file.
func violations(f *ast.File) []string {
	var out []string
	httpNames := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if slices.Contains(forbiddenImports, path) {
			out = append(out, "import "+path)
		}
		if path == "net/http" {
			name := "http"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			httpNames[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		name := sel.Sel.Name
		pkg, _ := sel.X.(*ast.Ident)
		switch {
		case slices.Contains(listenCalls, name):
			out = append(out, fmt.Sprintf("%s (listens or serves)", name))
		case slices.Contains(dialCalls, name):
			out = append(out, fmt.Sprintf("%s (opens a connection)", name))
		case slices.Contains(requestCalls, name):
			out = append(out, fmt.Sprintf("%s (builds an HTTP request)", name))
		case pkg != nil && httpNames[pkg.Name] && slices.Contains(defaultClientCalls, name):
			out = append(out, fmt.Sprintf("%s (sends with net/http's default client)", name))
		}
		return true
	})
	return out
}

package register

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBind_TrimsAndRefusesEmptyOrOdd(t *testing.T) {
	tests := []struct {
		name, value, want, wantErr string
	}{
		{name: "trimmed", value: " bind-123\n", want: "bind-123"},
		{name: "empty", value: "  ", wantErr: "is empty"},
		{name: "inner space", value: "a b", wantErr: "character 2"},
		{name: "too long", value: strings.Repeat("a", 1025), wantErr: "longer than 1024"},
		{name: "at the limit", value: strings.Repeat("a", 1024), want: strings.Repeat("a", 1024)},
		{name: "at the limit in a sea of whitespace", value: strings.Repeat("\n", 60000) + strings.Repeat("a", 1024), want: strings.Repeat("a", 1024)},
		{name: "a file past 64 KiB", value: strings.Repeat("\n", 64<<10) + "a", wantErr: "longer than 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bind-secret")
			if err := os.WriteFile(path, []byte(tt.value), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadBind(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want %q naming the file", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v", got, err)
			}
		})
	}
}

// An optional Secret volume shows a missing Secret, or one without the
// key, as no file: no bind secret, no error.
func TestReadBind_NoFileOrNoPathMeansNoBindSecret(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "bind-secret")} {
		if got, err := ReadBind(path); got != "" || err != nil {
			t.Errorf("ReadBind(%q) = %q, %v; want none and no error", path, got, err)
		}
	}
	dir := t.TempDir()
	if _, err := ReadBind(dir); err == nil {
		t.Error("a directory at the path read as a bind secret")
	}
}

func TestHowToRead_IsTheKubectlLineForTheClaimKey(t *testing.T) {
	want := "kubectl -n kubehz-system get secret kubehz-agent -o jsonpath='{.data.claim-code}' | base64 -d"
	if got := HowToRead("kubehz-system", "kubehz-agent"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

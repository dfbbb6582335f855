package release

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stampedVersion is what the builds are stamped with; it occurs nowhere
// else, so finding it in a binary proves the stamp took.
const stampedVersion = "v0.0.0-stampcheck.7"

// TestBinaries_CrossBuildStaticAndStamped runs the go build line of each
// Dockerfile, as buildx would for linux/amd64 and linux/arm64, and reads
// the result: an ELF for that machine, with no interpreter and no shared
// libraries (it runs on distroless static), built trimmed without cgo, and
// carrying the stamped version.
func TestBinaries_CrossBuildStaticAndStamped(t *testing.T) {
	for _, bin := range []string{"observer", "actor"} {
		text, err := os.ReadFile(filepath.Join(root(t), "Dockerfile."+bin))
		if err != nil {
			t.Fatal(err)
		}
		build, ok := goBuild(parseDockerfile(string(text))[0])
		if !ok {
			t.Fatalf("Dockerfile.%s has no go build", bin)
		}
		for arch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
			t.Run(bin+"/"+arch, func(t *testing.T) {
				out := crossBuild(t, build, arch)
				checkBinary(t, filepath.Join(out, bin), machine)
			})
		}
	}
}

// crossBuild runs a Dockerfile's go build line from the repository root,
// which stands in for the image's /src, with buildx's TARGETOS/TARGETARCH
// and writing into a temporary directory instead of /out.
func crossBuild(t *testing.T, build, arch string) string {
	t.Helper()
	out := t.TempDir()
	if !strings.Contains(build, "/out/") {
		t.Fatalf("the go build line writes somewhere other than /out/: %s", build)
	}
	cmd := exec.Command("sh", "-c", strings.ReplaceAll(build, "/out/", out+"/"))
	cmd.Dir = root(t)
	// GOFLAGS from the caller would not be in the image either.
	cmd.Env = append(os.Environ(), "TARGETOS=linux", "TARGETARCH="+arch, "VERSION="+stampedVersion, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", build, err, b)
	}
	return out
}

func checkBinary(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 {
		t.Errorf("ELF is %v %v, want %v 64-bit", f.Machine, f.Class, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("binary asks for a dynamic loader")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary links shared libraries %v", libs)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(stampedVersion)) {
		t.Errorf("the version %s is not stamped into the binary", stampedVersion)
	}
	// The build settings the toolchain records say how it was really built.
	info, err := exec.Command("go", "version", "-m", path).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true"} {
		if !bytes.Contains(info, []byte(want)) {
			t.Errorf("build settings lack %s:\n%s", want, info)
		}
	}
}

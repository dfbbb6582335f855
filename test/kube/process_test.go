package kube

import (
	"debug/buildinfo"
	"debug/elf"
	"path/filepath"
	"testing"
	"time"
)

// Wait(0) on a process already known to have ended must give its exit
// code every time; a select racing the exit against a zero timer used to
// answer "still running" about half the time.
func TestProcess_WaitZeroOnAnEndedProcessGivesItsCode(t *testing.T) {
	p, err := StartProcess("/bin/sh", nil, "-c", "exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if code, err := p.Wait(10 * time.Second); err != nil || code != 3 {
		t.Fatalf("first wait: code %d, err %v; want 3", code, err)
	}
	for i := range 200 {
		if !p.Exited() {
			t.Fatal("Exited is false after Wait returned")
		}
		if code, err := p.Wait(0); err != nil || code != 3 {
			t.Fatalf("Wait(0) #%d: code %d, err %v; want 3", i, code, err)
		}
	}
}

// TestBuild_WithoutRaceIsTheShippedStaticStrippedBinary: the benchmark runs
// what Build makes and reports its memory, so it must be the binary users
// run: no interpreter (static, no libc mapped) and no symbol table.
func TestBuild_WithoutRaceIsTheShippedStaticStrippedBinary(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "observer")
	if err := Build(root, "./observer", out, false); err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names an interpreter: it is dynamically linked (cgo), unlike the image's")
		}
	}
	if s := f.Section(".symtab"); s != nil {
		t.Error("the binary keeps its symbol table: it was not built with -s -w as make build and the Dockerfiles do")
	}
	info, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for key, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[key] != want {
			t.Errorf("built with %s=%q, want %q as the image's binary is", key, settings[key], want)
		}
	}
}

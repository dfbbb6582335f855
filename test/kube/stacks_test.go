package kube

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A program stuck in its own code is quit with SIGQUIT: the goroutine
// waiting there is found, by its function, and the runtime's own are not.
func TestQuit_FindsTheGoroutineWaitingInTheProgramsOwnCode(t *testing.T) {
	dir := t.TempDir()
	src := `package main

import "time"

func waitForever(ch chan int) { <-ch }

func main() {
	go waitForever(make(chan int))
	println("ready")
	time.Sleep(time.Hour)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.test/stuck\n\ngo 1.26\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "stuck")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	p, err := StartProcess(bin, []string{"GOTRACEBACK=all"})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Output(), "ready") {
		if time.Now().After(deadline) {
			p.Kill()
			t.Fatalf("the program never said ready:\n%s", p.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Quit(10 * time.Second)

	found := goroutinesIn(p.Output(), "main.")
	if len(found) != 2 {
		t.Fatalf("found %d goroutines in main, want 2 (main, and the one waiting on the channel):\n%s", len(found), strings.Join(found, "\n\n"))
	}
	var waiting bool
	for _, g := range found {
		waiting = waiting || (strings.Contains(g, "[chan receive") && strings.Contains(g, "main.waitForever("))
	}
	if !waiting {
		t.Errorf("no goroutine found waiting in main.waitForever:\n%s", strings.Join(found, "\n\n"))
	}
	if got := goroutinesIn(p.Output(), "example.test/elsewhere."); len(got) != 0 {
		t.Errorf("found %d goroutines in a package the program does not have", len(got))
	}
}

package kube

import (
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

package kube

import "time"

// Fataler is the part of testing.TB that WaitUntil needs, so that the
// package does not pull the testing package into the demo binary.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// WaitUntil checks ok every 100 ms and fails the test, naming what it
// waited for, when ok is still false after 60 seconds.
func WaitUntil(t Fataler, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

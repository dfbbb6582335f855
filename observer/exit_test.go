package main

import (
	"errors"
	"strings"
	"testing"
)

// TestPrintExit_EscapesOutsideTextInTheLastLine: run's error can quote an
// apiserver's or the platform's text, and it is printed raw to stderr.
func TestPrintExit_EscapesOutsideTextInTheLastLine(t *testing.T) {
	var b strings.Builder
	printExit(&b, errors.New("get Secret \"x\x1b]0;owned\a\u202e\": forbidden"))
	if got, want := b.String(), `observer: get Secret "x\x1b]0;owned\a\u202e": forbidden`+"\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	b.Reset()
	printExit(&b, nil)
	if b.Len() != 0 {
		t.Errorf("a clean stop printed %q", b.String())
	}
}

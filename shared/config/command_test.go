package config

import (
	"errors"
	"strings"
	"testing"
)

// TestPrintExit_EscapesOutsideTextInTheLastLine: run's error can quote an
// apiserver's or the platform's text, and it is printed raw to stderr.
func TestPrintExit_EscapesOutsideTextInTheLastLine(t *testing.T) {
	var b strings.Builder
	printExit(&b, "actor", errors.New("get Secret \"x\x1b]0;owned\a\u202e\": forbidden"))
	if got, want := b.String(), `actor: get Secret "x\x1b]0;owned\a\u202e": forbidden`+"\n"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	b.Reset()
	printExit(&b, "actor", nil)
	if b.Len() != 0 {
		t.Errorf("a clean stop printed %q", b.String())
	}
}

func TestSubcommand_RunsTheNamedOneAndRefusesAnUnknownNameListingTheKnown(t *testing.T) {
	var ran []string
	commands := []Command{
		{Name: "probe", Run: func() error { ran = append(ran, "probe"); return nil }},
		{Name: "status", Run: func() error { ran = append(ran, "status"); return errors.New("no state file") }},
	}
	var out strings.Builder
	if sub, err := Subcommand([]string{"actor"}, "actor", "usage", &out, commands...); sub || err != nil {
		t.Errorf("no arguments: subcommand %v, err %v; want the agent to run", sub, err)
	}
	if sub, err := Subcommand([]string{"actor", "status", "--json"}, "actor", "usage", &out, commands...); !sub || err == nil {
		t.Errorf("status: subcommand %v, err %v; want status run and its error returned", sub, err)
	}
	if sub, err := Subcommand([]string{"actor", "help"}, "actor", "usage", &out, commands...); !sub || err != nil || out.String() != "usage" {
		t.Errorf("help: subcommand %v, err %v, printed %q; want the usage", sub, err, out.String())
	}
	sub, err := Subcommand([]string{"actor", "stauts"}, "actor", "usage", &out, commands...)
	var cfgErr *Error
	if !sub || !errors.As(err, &cfgErr) || ExitCode(err) != 2 {
		t.Fatalf("stauts: subcommand %v, err %v; want a configuration error, exit 2", sub, err)
	}
	if want := "want one of probe, status, version, help, or none to run"; !strings.Contains(err.Error(), want) {
		t.Errorf("stauts: %q does not say %q", err, want)
	}
	if len(ran) != 1 || ran[0] != "status" {
		t.Errorf("ran %q, want only status", ran)
	}
}

package config

import (
	"fmt"
	"strings"

	"kubehz.dev/agent/shared/token"
)

// Problem is one bad variable and what is wrong with it, in words safe to
// log: a token's value is never quoted, even one pasted into the wrong
// variable.
type Problem struct {
	Var    string
	Reason string
}

// Error lists every bad variable, in the order they were checked.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration:")
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  %s: %s", p.Var, p.Reason)
	}
	return b.String()
}

// Problems collects failures so parsing carries on after the first one.
type Problems []Problem

// Add masks every string argument before formatting: those are the quoted
// values, and a token pasted into the wrong variable must not reach the
// exit message. Masking before quoting keeps the closing quote.
func (p *Problems) Add(name, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = token.Redact(s)
		}
	}
	*p = append(*p, Problem{Var: name, Reason: fmt.Sprintf(format, args...)})
}

func (p Problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Problems: p}
}

// UnknownCommand is the error for a subcommand the binary does not have:
// bad invocation, so exit 2 before any I/O, naming the ones it has.
func UnknownCommand(got string, known ...string) error {
	return &Error{Problems: []Problem{{Var: "command", Reason: fmt.Sprintf(
		"unknown subcommand %q; want one of %s, or none to run", token.Redact(got), strings.Join(known, ", "))}}}
}

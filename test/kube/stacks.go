package kube

import "strings"

// goroutinesIn reads the stack dump a Go program writes to stderr when
// SIGQUIT ends it, at the end of out, and returns the goroutines whose
// stacks pass through a package under pkg: where that code was waiting.
func goroutinesIn(out, pkg string) []string {
	i := strings.LastIndex(out, "SIGQUIT: quit\n")
	if i < 0 {
		return nil
	}
	var found []string
	// Goroutines follow one another, each after a blank line; each frame
	// is a function line, then a tab and the file.
	for g := range strings.SplitSeq(out[i:], "\n\n") {
		if strings.HasPrefix(g, "goroutine ") && strings.Contains(g, "\n"+pkg) {
			found = append(found, strings.TrimRight(g, "\n"))
		}
	}
	return found
}

// Command actor is kubehz-agent's managed tier: a leader-elected Deployment
// that polls the platform's desired state and, only when the platform
// authorizes it and only while it holds the lease, scales worker pools.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kubehz.dev/agent/shared/config"
	"kubehz.dev/agent/shared/printable"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

// exitCode maps run's error: 2 for bad configuration (nothing was sent), 1
// for any other failure (a lost lease among them: the process restarts as a
// standby), 0 for a clean stop.
func exitCode(err error) int {
	printExit(os.Stderr, err)
	return config.ExitCode(err)
}

// printExit writes run's error, if any, as the process's last line. The
// error can quote outside text (an apiserver's message, a value from a
// Secret or document), so it is escaped as every log line is.
func printExit(w io.Writer, err error) {
	if err != nil {
		fmt.Fprintf(w, "actor: %s\n", printable.String(err.Error()))
	}
}

// Command actor is kubehz-agent's managed tier: a leader-elected Deployment
// that polls the platform's desired state and, only when the platform
// authorizes it and only while it holds the lease, scales worker pools.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"kubehz.dev/agent/shared/config"
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
	if err != nil {
		fmt.Fprintf(os.Stderr, "actor: %v\n", err)
	}
	return config.ExitCode(err)
}

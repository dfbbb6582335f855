// Command observer is kubehz-agent's read-only half: it watches the cluster
// and pushes a debounced schema-2 heartbeat to the kubehz platform.
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
// for any other failure, 0 for a clean stop.
func exitCode(err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "observer: %v\n", err)
	}
	return config.ExitCode(err)
}

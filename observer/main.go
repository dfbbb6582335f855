// Command observer is kubehz-agent's read-only half: it watches the cluster
// and pushes a debounced schema-2 heartbeat to the kubehz platform.
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
// for any other failure, 0 for a clean stop.
func exitCode(err error) int {
	printExit(os.Stderr, err)
	return config.ExitCode(err)
}

// printExit writes run's error, if any, as the process's last line. The
// error can quote outside text (an apiserver's message, a value from a
// Secret or document), so it is escaped as every log line is.
func printExit(w io.Writer, err error) {
	if err != nil {
		fmt.Fprintf(w, "observer: %s\n", printable.String(err.Error()))
	}
}

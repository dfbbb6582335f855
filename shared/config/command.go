package config

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"kubehz.dev/agent/shared/buildinfo"
	"kubehz.dev/agent/shared/printable"
)

// Run is a binary's whole life, with everything it reads from the process
// passed in so that tests can call it.
type Run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// Main runs run until it returns or SIGINT or SIGTERM stops it, prints its
// error, if any, as the process's last line and returns the exit code
// (ExitCode) for main's os.Exit.
func Main(binary string, run Run) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	printExit(os.Stderr, binary, err)
	return ExitCode(err)
}

// printExit writes err, if any, after the binary's name. The error can quote
// outside text (an apiserver's message, a value from a Secret or document),
// so it is escaped as every log line is.
func printExit(w io.Writer, binary string, err error) {
	if err != nil {
		fmt.Fprintf(w, "%s: %s\n", binary, printable.String(err.Error()))
	}
}

// Command is a subcommand: a short-lived job run instead of the agent.
type Command struct {
	Name string
	Run  func() error
}

// Subcommand runs the subcommand args name, if they name one, and reports
// whether they did. version and help answer first (answer). Any
// other name that is not one of commands is bad configuration (exit 2): a
// mistyped `kubectl exec … status` must never start a second agent beside
// the running one.
func Subcommand(args []string, binary, usage string, stdout io.Writer, commands ...Command) (bool, error) {
	if len(args) < 2 {
		return false, nil
	}
	if answered, err := answer(args[1], binary, usage, stdout); answered {
		return true, err
	}
	known := make([]string, 0, len(commands)+2)
	for _, c := range commands {
		if c.Name == args[1] {
			return true, c.Run()
		}
		known = append(known, c.Name)
	}
	return true, UnknownCommand(args[1], append(known, "version", "help")...)
}

// answer answers the conventional questions a command-line user asks of
// either binary (version and help, spelt as a subcommand or a flag) and
// reports whether arg was one. The answer comes before the configuration is
// read, so it works in any container and never starts an agent.
func answer(arg, binary, usage string, stdout io.Writer) (answered bool, err error) {
	switch arg {
	case "version", "--version", "-version":
		_, err = fmt.Fprintf(stdout, "%s %s\n", binary, buildinfo.Version)
	case "help", "--help", "-help", "-h":
		_, err = io.WriteString(stdout, usage)
	default:
		return false, nil
	}
	return true, err
}

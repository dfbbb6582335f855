package buildinfo

import (
	"fmt"
	"io"
)

// Answer answers the conventional questions a command-line user asks of
// either binary (version and help, spelt as a subcommand or a flag) and
// reports whether arg was one. The answer comes before the configuration is
// read, so it works in any container and never starts an agent.
func Answer(arg, binary, usage string, stdout io.Writer) (answered bool, err error) {
	switch arg {
	case "version", "--version", "-version":
		_, err = fmt.Fprintf(stdout, "%s %s\n", binary, Version)
	case "help", "--help", "-help", "-h":
		_, err = io.WriteString(stdout, usage)
	default:
		return false, nil
	}
	return true, err
}

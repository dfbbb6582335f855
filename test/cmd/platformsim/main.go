// Command platformsim runs the platform simulator on its own, for demos and
// for driving an agent by hand: it prints its base URL, then one line per
// heartbeat, until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"kubehz.dev/agent/test/platformsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case err == nil:
	case errors.As(err, &usage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "platformsim:", err)
		os.Exit(1)
	}
}

// usageError marks bad flags; the flag package has already explained them.
type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("platformsim", flag.ContinueOnError)
	flags.SetOutput(stderr)
	listen := flags.String("listen", "127.0.0.1:0", "address to listen on")
	cluster := flags.String("cluster", platformsim.DefaultClusterID, "the cluster id answered; others get 404")
	token := flags.String("token", platformsim.DefaultToken, "the accepted bearer token")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err}
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(flags.Args(), " "))
		return usageError{errors.New("unexpected arguments")}
	}

	var mu sync.Mutex // handlers run concurrently; lines must not interleave
	sim := platformsim.New(platformsim.Options{
		Listen:    *listen,
		ClusterID: *cluster,
		Token:     *token,
		OnRequest: func(r platformsim.Request) {
			if r.Endpoint != platformsim.EndpointHeartbeat {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(stdout, beatLine(r))
		},
	})
	url, err := sim.Start()
	if err != nil {
		return err
	}
	defer sim.Close()
	mu.Lock()
	fmt.Fprintln(stdout, url)
	mu.Unlock()
	<-ctx.Done()
	return nil
}

// beatLine summarizes one heartbeat request without the token: auth says only
// whether one was sent and whether it was refused.
func beatLine(r platformsim.Request) string {
	verdict := "rejected"
	if r.Status/100 == 2 && len(r.Issues) == 0 {
		verdict = "accepted"
	}
	auth := "ok"
	switch {
	case r.Token == "":
		auth = "missing"
	case r.Status == 401 && !r.Faulted:
		auth = "wrong"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %d %s auth=%s bytes=%d", r.Time.UTC().Format("2006-01-02T15:04:05Z"),
		r.Method, r.Status, verdict, auth, len(r.Body))
	if r.Faulted {
		b.WriteString(" fault=true")
	}
	for _, key := range []string{"nodes", "actions", "machineIssues"} {
		if v, ok := r.Lookup(key); ok {
			if list, isList := v.([]any); isList {
				fmt.Fprintf(&b, " %s=%d", key, len(list))
			}
		}
	}
	if len(r.Issues) > 0 {
		fmt.Fprintf(&b, " field=%s issue=%q issues=%d", r.Issues[0].Path, r.Issues[0].Message, len(r.Issues))
	}
	return b.String()
}

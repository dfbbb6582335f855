// Command demo runs kubehz-agent locally and plays a scripted story: a real
// kube-apiserver and etcd, the real kube-controller-manager and
// machine-controller with its webhook, a simulated cloud and kubelets
// (test/clustersim), the platform simulator, the observer and two actor
// replicas under their own ServiceAccounts with the
// RBAC from deploy/. A live view shows what the platform sees in each
// heartbeat while the platform scales a pool, a worker dies and is healed, a
// pool is upgraded node by node, and the actor's Deployment is deleted. It
// ends by itself, or on Ctrl-C, and removes everything it started.
//
// -fast shortens every interval and pause, for the test that plays the
// story end to end; the view is plain text whenever stdout is not a
// terminal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"kubehz.dev/agent/test/clustersim"
	"kubehz.dev/agent/test/kube"
	"kubehz.dev/agent/test/platformsim"
)

// errInterrupted ends the demo early on Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	switch {
	case errors.Is(err, errInterrupted):
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// pace sets how fast the story moves.
type pace struct {
	poll                       time.Duration // the actor's desired-state poll, whole seconds
	fullBeat, debounce, minGap time.Duration // the observer's cadence
	join                       time.Duration // a new server's node joins this long after its machine is created
	linger                     time.Duration // each step's outcome stays on screen this long
	timeout                    time.Duration // each scene's bound
	quiet                      time.Duration // how long the story watches a switched-off actor not act
	refresh                    time.Duration // the live view's redraw interval
}

var (
	humanPace = pace{poll: 2 * time.Second, fullBeat: 10 * time.Second, debounce: time.Second, minGap: 2 * time.Second,
		join: 3 * time.Second, linger: 10 * time.Second, timeout: 3 * time.Minute, quiet: 25 * time.Second, refresh: time.Second}
	fastPace = pace{poll: time.Second, fullBeat: 3 * time.Second, debounce: 200 * time.Millisecond, minGap: 500 * time.Millisecond,
		join: 300 * time.Millisecond, timeout: 2 * time.Minute, quiet: 8 * time.Second, refresh: 250 * time.Millisecond}
)

func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	fast := flags.Bool("fast", false, "short intervals and no pauses (for tests)")
	logDir := flags.String("logs", "", "where the agents' logs go (default .demo/ in the repository)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	p := humanPace
	if *fast {
		p = fastPace
	}
	d := &demo{out: stdout, pace: p, logDir: *logDir, tty: isTerminal(stdout)}
	err := d.run(ctx)
	d.cleanup()
	if ctx.Err() != nil {
		d.say("Interrupted; everything the demo started is gone")
		return errInterrupted
	}
	if err != nil {
		d.say("The demo failed; everything it started is gone. The agents' logs are in %s", d.logDir)
		return err
	}
	d.say("Done: everything the demo started is gone. The agents' logs are in %s", d.logDir)
	return nil
}

// demo is one run: what it started, undone in reverse by cleanup.
type demo struct {
	out    io.Writer
	pace   pace
	logDir string
	tty    bool
	undo   []func()
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "%s  %s\n", time.Now().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// later registers one step of the cleanup, said as it happens.
func (d *demo) later(what string, f func()) {
	d.undo = append(d.undo, func() { d.say("%s", what); f() })
}

func (d *demo) cleanup() {
	for i := len(d.undo) - 1; i >= 0; i-- {
		d.undo[i]()
	}
	d.undo = nil
}

func (d *demo) run(ctx context.Context) error {
	d.say("Starting kube-apiserver %s and etcd %s on loopback ports (a few seconds)", kube.KubeVersion, kube.EtcdVersion)
	env, err := kube.Start(kube.Options{})
	if err != nil {
		return err
	}
	d.later("Stopping kube-apiserver and etcd, removing their data", func() { _ = env.Stop() })
	dir, err := os.MkdirTemp("", "kubehz-demo-")
	if err != nil {
		return err
	}
	d.later("Removing the demo's temporary files", func() { _ = os.RemoveAll(dir) })
	if d.logDir == "" {
		d.logDir = filepath.Join(env.Root, ".demo")
	}
	if err := os.MkdirAll(d.logDir, 0o755); err != nil {
		return err
	}

	d.say("Applying deploy/actor: the observer and the actor, their ServiceAccounts and RBAC")
	setup, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	observerKubeconfig, actorKubeconfig, err := env.DeployAgents(setup, dir)
	if err != nil {
		return err
	}
	d.say("Creating a small simulated cluster: a control-plane node and a shop's pods")
	if err := seed(setup, env.Client); err != nil {
		return err
	}
	d.say("Starting kube-controller-manager, machine-controller %s and its webhook on a simulated cloud: pool %s with 2 servers, pool %s whose server the cloud cannot create",
		kube.MachineControllerVersion, poolName, brokenPool)
	world, stopWorld, err := startMachines(setup, env, dir, d.logDir, d.pace.join)
	if err != nil {
		return err
	}
	d.later("Stopping the controllers and the simulated kubelets", stopWorld)

	plat := newPlatform()
	url, err := plat.sim.Start()
	if err != nil {
		return err
	}
	d.later("Stopping the platform simulator", plat.sim.Close)
	d.say("Platform simulator listening on %s; it authorizes nothing yet", url)

	d.say("Building the observer and the actor (go build; a minute or two the first time on a machine)")
	observerBin, actorBin, err := kube.BuildAgents(env.Root, dir, false)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "agent-token")
	if err := os.WriteFile(tokenFile, []byte(platformsim.DefaultToken+"\n"), 0o600); err != nil {
		return err
	}
	observerID := identity{bin: observerBin, env: kube.AgentEnv{PlatformURL: url, TokenFile: tokenFile, Kubeconfig: observerKubeconfig}}
	actorID := identity{bin: actorBin, env: kube.AgentEnv{PlatformURL: url, TokenFile: tokenFile, Kubeconfig: actorKubeconfig}}
	var ags agents
	d.later("Stopping the observer and the actors", func() {
		if err := ags.stop(); err != nil {
			d.say("An agent did not stop cleanly: %v", err)
		}
	})
	if err := ags.startObserver(d.logDir, observerID, d.pace); err != nil {
		return err
	}
	if err := ags.startActors(d.logDir, actorID, d.pace); err != nil {
		return err
	}
	d.say("The observer and two actor replicas are running as their ServiceAccounts; logs in %s", d.logDir)
	return d.play(ctx, plat, world, env, &ags)
}

// play shows the live view while the story runs, and stops the story when
// an agent dies on its own.
func (d *demo) play(ctx context.Context, plat *platform, world *clustersim.World, env *kube.Env, ags *agents) error {
	if d.tty {
		d.say("The live view starts now; Ctrl-C ends the demo at any time")
		if err := sleep(ctx, 2*time.Second); err != nil {
			return err
		}
	}
	storyCtx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	scr := &screen{out: d.out, tty: d.tty, plat: plat, leases: env.Client, refresh: d.pace.refresh}
	viewCtx, stopView := context.WithCancel(ctx)
	viewDone := make(chan struct{})
	go func() { defer close(viewDone); scr.run(viewCtx) }()
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-storyCtx.Done():
				return
			case <-tick.C:
			}
			if name := ags.exited(); name != "" {
				abort(fmt.Errorf("the %s exited on its own; its log is %s", name, filepath.Join(d.logDir, name+".log")))
				return
			}
		}
	}()
	s := &story{plat: plat, world: world, client: env.Client, screen: scr, pace: d.pace}
	err := s.play(storyCtx)
	if err != nil && ctx.Err() == nil {
		// Whether machine-controller stalled is the first question about a
		// step that timed out; its log does not say where it waits.
		stuck := filepath.Join(d.logDir, "machine-controller-stuck.log")
		if werr := os.WriteFile(stuck, []byte(world.Controllers.Stuck()+"\n"), 0o644); werr != nil {
			d.say("Could not write %s: %v", stuck, werr)
		}
	}
	abort(nil)
	<-watchDone
	stopView()
	<-viewDone
	return err
}

// isTerminal reports whether w is a character device, where redrawing in
// place makes sense.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

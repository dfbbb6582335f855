package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"kubehz.dev/agent/test/kube"
)

// agents are the running observer and actor replicas, each under its own
// ServiceAccount, each writing its JSON log to a file of its own.
type agents struct {
	procs []*kube.Process
	names []string
	logs  []*os.File
}

// identity is what one agent process runs as and talks to.
type identity struct {
	bin string
	env kube.AgentEnv
}

func (a *agents) start(name, logDir string, id identity, env ...string) error {
	logFile, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return err
	}
	id.env.LivenessFile = filepath.Join(logDir, name+".alive")
	p, err := kube.StartProcessTee(id.bin, id.env.List(env...), logFile)
	if err != nil {
		logFile.Close()
		return err
	}
	a.procs, a.names, a.logs = append(a.procs, p), append(a.names, name), append(a.logs, logFile)
	return nil
}

// startObserver runs the observer at the pace's cadence.
func (a *agents) startObserver(logDir string, id identity, p pace) error {
	return a.start("observer", logDir, id,
		"KUBEHZ_FULL_INTERVAL="+p.fullBeat.String(), "KUBEHZ_DEBOUNCE="+p.debounce.String(), "KUBEHZ_MIN_GAP="+p.minGap.String())
}

// startActors runs two actor replicas; leader election picks one.
func (a *agents) startActors(logDir string, id identity, p pace) error {
	for _, pod := range []string{"actor-1", "actor-2"} {
		id.env.Pod = pod
		// The story heals within a minute of the actor starting, so
		// healing's local floors are the contract's own here; deploy/actor
		// ships 600 s, 600 s and 300 s.
		if err := a.start(pod, logDir, id, "KUBEHZ_DESIRED_POLL_SECONDS="+strconv.Itoa(int(p.poll/time.Second)),
			"KUBEHZ_HEAL_MIN_COOLDOWN_SECONDS=0", "KUBEHZ_HEAL_MIN_NODE_STARTUP_TIMEOUT_SECONDS=60",
			"KUBEHZ_HEAL_MIN_UNHEALTHY_AFTER_SECONDS=60"); err != nil {
			return err
		}
	}
	return nil
}

// exited names the first agent that ended on its own, or "".
func (a *agents) exited() string {
	for i, p := range a.procs {
		if p.Exited() {
			return a.names[i]
		}
	}
	return ""
}

// stop ends every agent with SIGTERM, as the kubelet would, newest first so
// the actors release their Lease before the observer goes.
func (a *agents) stop() error {
	var errs []error
	for i := len(a.procs) - 1; i >= 0; i-- {
		code, err := a.procs[i].Stop(20 * time.Second)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", a.names[i], err))
		case code != 0:
			errs = append(errs, fmt.Errorf("%s: exit %d", a.names[i], code))
		}
		a.logs[i].Close()
	}
	a.procs, a.names, a.logs = nil, nil, nil
	return errors.Join(errs...)
}

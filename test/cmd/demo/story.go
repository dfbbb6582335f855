package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"kubehz.dev/agent/test/clustersim"
)

// story plays the scripted scenes. Each scene changes one thing, then waits
// for what the platform should see because of it, at most pace.timeout.
type story struct {
	plat   *platform
	world  *clustersim.World
	client kubernetes.Interface
	screen *screen
	pace   pace
}

// scenes is the whole story, in order.
func (s *story) scenes() []scene {
	return []scene{
		{"The platform scales a pool", s.scale},
		{"A worker dies and is healed", s.heal},
		{"A pool is upgraded node by node", s.upgrade},
		{"The actor is switched off; the observer keeps reporting", s.killSwitch},
	}
}

type scene struct {
	title string
	play  func(context.Context) error
}

// play runs every scene and says how each ended; it stops at the first
// that fails.
func (s *story) play(ctx context.Context) error {
	s.screen.step("Getting ready: the observer reports the cluster, the two actors elect a leader")
	if _, err := s.await(ctx, 0, "a heartbeat showing 2 ready machines in "+poolName, func(b beat) bool {
		_, ready, _ := b.pool(poolName)
		return ready == 2
	}); err != nil {
		return fmt.Errorf("getting ready: %w", err)
	}
	if err := s.leaderElected(ctx); err != nil {
		return fmt.Errorf("getting ready: %w", err)
	}
	if err := sleep(ctx, s.pace.linger); err != nil {
		return err
	}
	scenes := s.scenes()
	for i, sc := range scenes {
		s.screen.step(fmt.Sprintf("Step %d of %d: %s", i+1, len(scenes), sc.title))
		if err := sc.play(ctx); err != nil {
			verdict := "failed" // the story's fault, or an agent's
			if ctx.Err() != nil {
				verdict = "stopped"
			}
			s.screen.note("Step %d of %d %s: %v", i+1, len(scenes), verdict, err)
			return fmt.Errorf("step %d of %d (%s): %w", i+1, len(scenes), sc.title, err)
		}
		s.screen.note("Step %d of %d done: %s", i+1, len(scenes), sc.title)
		if i == len(scenes)-1 {
			break // the last frame stays on screen anyway
		}
		if err := sleep(ctx, s.pace.linger); err != nil {
			return err
		}
	}
	s.screen.note("The story is complete: every step happened as told")
	return nil
}

// leaderElected waits until one actor holds a live Lease.
func (s *story) leaderElected(ctx context.Context) error {
	deadline := time.Now().Add(s.pace.timeout)
	for {
		holder, live, err := leaseHolder(ctx, s.client)
		if err == nil && holder != "" && live {
			s.screen.note("Actor %s leads; the other replica stands by", holder)
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("no actor took the Lease kubehz-system/kubehz-actor within %s: %w", s.pace.timeout, err)
			}
			return fmt.Errorf("no actor took the Lease kubehz-system/kubehz-actor within %s", s.pace.timeout)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

// await waits for a beat after since that ok accepts, naming what did not
// happen when the scene's time runs out.
func (s *story) await(ctx context.Context, since uint64, what string, ok func(beat) bool) (beat, error) {
	b, err := s.plat.await(ctx, since, s.pace.timeout, ok)
	if err != nil {
		return beat{}, s.timedOut(ctx, err, what)
	}
	return b, nil
}

// timedOut says what did not happen, and what the platform saw last.
func (s *story) timedOut(ctx context.Context, err error, what string) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	last := "no heartbeat at all"
	if b, ok := s.plat.Latest(); ok {
		last = fmt.Sprintf("heartbeat #%d at %s with actions %v", b.Seq, b.At.Format(time.TimeOnly), b.Actions)
	}
	return fmt.Errorf("this did not happen within %s: %s (last seen: %s)", s.pace.timeout, what, last)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// Version refresh periods: every 5 minutes to notice a control-plane upgrade
// within a few beats, but every 10 seconds until the first answer, so an
// apiserver that was briefly unavailable at start does not leave the beat
// without a version for 5 minutes (docs/contract.md#g-13).
const (
	VersionRefresh = 5 * time.Minute
	VersionRetry   = 10 * time.Second
)

// Getter is the slice of a REST client the version read needs.
type Getter interface {
	Get() *rest.Request
}

// Version tracks the apiserver's own gitVersion. It stays "" until the
// apiserver first answers; a failed refresh keeps the last known value.
type Version struct {
	rest   Getter
	log    *slog.Logger
	notify func()

	mu      sync.Mutex
	current string
	lastErr string
}

// VersionOptions tune a Version; every field may be left zero.
type VersionOptions struct {
	Log *slog.Logger // nil: discard
	// Notify runs when the version changes, so the next beat carries it;
	// nil: nobody.
	Notify func()
}

// NewVersion builds a Version that reads /version through rest.
func NewVersion(rest Getter, opts VersionOptions) *Version {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Version{rest: rest, log: log, notify: opts.Notify}
}

// Get returns the last gitVersion read, or "".
func (v *Version) Get() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.current
}

// Refresh reads /version once, within ctx. Errors are logged once per
// distinct message, so a persistent failure does not flood the log.
func (v *Version) Refresh(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	info, err := v.read(ctx)
	v.mu.Lock()
	if err != nil {
		report := err.Error() != v.lastErr && ctx.Err() == nil
		v.lastErr = err.Error()
		v.mu.Unlock()
		if report {
			v.log.Warn("Cannot read the apiserver version", "err", err)
		}
		return false
	}
	v.lastErr = ""
	changed := info.GitVersion != v.current
	v.current = info.GitVersion
	v.mu.Unlock()
	if changed {
		v.log.Info("Apiserver version", "gitVersion", info.GitVersion)
		if v.notify != nil {
			v.notify()
		}
	}
	return true
}

func (v *Version) read(ctx context.Context) (version.Info, error) {
	var info version.Info
	raw, err := v.rest.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return info, fmt.Errorf("get /version: %w", err)
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, fmt.Errorf("decode /version: %w", err)
	}
	return info, nil
}

// Run refreshes until ctx is done: quickly until the first success, then
// every VersionRefresh.
func (v *Version) Run(ctx context.Context) {
	known := v.Get() != ""
	for {
		wait := VersionRefresh
		if !known {
			wait = VersionRetry
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		known = v.Refresh(ctx) || known
	}
}

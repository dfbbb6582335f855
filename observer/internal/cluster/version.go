package cluster

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/version"
)

// VersionRefresh is how often the apiserver's version is re-read: often
// enough to notice a control-plane upgrade within a few beats.
const VersionRefresh = 5 * time.Minute

// ServerVersioner is the slice of discovery the observer needs.
type ServerVersioner interface {
	ServerVersion() (*version.Info, error)
}

// Version tracks the apiserver's own gitVersion. It stays "" until discovery
// first answers; a failed refresh keeps the last known value.
type Version struct {
	disc ServerVersioner
	log  *slog.Logger

	mu      sync.Mutex
	current string
	lastErr string
}

// NewVersion builds a Version; nothing is read until Refresh or Run.
func NewVersion(d ServerVersioner, log *slog.Logger) *Version {
	return &Version{disc: d, log: log}
}

// Get returns the last gitVersion read, or "".
func (v *Version) Get() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.current
}

// Refresh reads the version once. Errors are logged once per distinct
// message, so a persistent failure does not flood the log every 5 minutes.
func (v *Version) Refresh() {
	info, err := v.disc.ServerVersion()
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil {
		if msg := err.Error(); msg != v.lastErr {
			v.lastErr = msg
			v.log.Warn("Cannot read the apiserver version", "err", err)
		}
		return
	}
	v.lastErr = ""
	if info.GitVersion != v.current {
		v.log.Info("Apiserver version", "gitVersion", info.GitVersion)
		v.current = info.GitVersion
	}
}

// Run refreshes every VersionRefresh until ctx is done. The caller does the
// first Refresh before the first beat.
func (v *Version) Run(ctx context.Context) {
	t := time.NewTicker(VersionRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			v.Refresh()
		}
	}
}

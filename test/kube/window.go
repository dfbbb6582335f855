package kube

import (
	"fmt"
	"os"
	"time"
)

// WindowEnv sets the steady window every benchmark samples over, a Go
// duration; default DefaultWindow.
const WindowEnv = "KUBEHZ_BENCH_WINDOW"

// DefaultWindow spans three of the runtime's forced collections (every two
// minutes): a shorter window can miss the heap at its largest.
const DefaultWindow = 360 * time.Second

// Window is the steady window from WindowEnv.
func Window() (time.Duration, error) {
	raw := os.Getenv(WindowEnv)
	if raw == "" {
		return DefaultWindow, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 5*time.Second {
		return 0, fmt.Errorf("%s=%q: want a duration of at least 5s", WindowEnv, raw)
	}
	return d, nil
}

// Command observer is kubehz-agent's read-only half: it watches the cluster
// and pushes a debounced schema-2 heartbeat to the kubehz platform.
package main

import (
	"os"

	"kubehz.dev/agent/shared/config"
)

// main exits 2 for bad configuration (nothing was sent), 1 for any other
// failure, 0 for a clean stop.
func main() { os.Exit(config.Main("observer", run)) }

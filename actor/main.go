// Command actor is kubehz-agent's managed tier: a leader-elected Deployment
// that polls the platform's desired state and, only when the platform
// authorizes it and only while it holds the lease, acts on the
// machine-controller worker pools: it scales them, replaces workers that
// died or never joined (and force-deletes the pods that keep a dead
// worker's drain from finishing), and rolls them to a new kubelet version.
package main

import (
	"os"

	"kubehz.dev/agent/shared/config"
)

// main exits 2 for bad configuration (nothing was sent), 1 for any other
// failure (a lost lease among them: the process restarts as a standby), 0
// for a clean stop.
func main() { os.Exit(config.Main("actor", run)) }

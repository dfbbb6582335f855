package main

// usage answers `observer help`; version and help answer before the
// configuration is read (buildinfo.Answer).
const usage = `Usage: observer [command]

With no command, observer runs: it watches the cluster read-only and sends a
heartbeat to the platform at KUBEHZ_API_URL for the cluster CLUSTER_ID.
Settings are environment variables (see the README's Configuration section);
a bad one exits 2 before anything is sent.

Commands:
  register   register the cluster without lok8s and store its token Secret
  probe      the liveness probe: fails when the running observer is wedged
  ready      the readiness probe: fails while heartbeats have failed too long
  status     print the running observer's state (--json for the raw file)
  version    print the version
  help       print this help
`

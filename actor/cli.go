package main

// usage answers `actor help`; version and help answer before the
// configuration is read (config.Subcommand).
const usage = `Usage: actor [command]

With no command, actor runs: one of two replicas holds the Lease and, only
when the platform at KUBEHZ_API_URL authorizes it for the cluster CLUSTER_ID,
scales, heals and upgrades machine-controller worker pools. Settings are
environment variables (see the README's Configuration and The actor
sections); a bad one exits 2 before anything is sent.

Commands:
  probe      the liveness probe: fails when the running actor is wedged
  status     print the running actor's state (--json for the raw file)
  version    print the version
  help       print this help
`

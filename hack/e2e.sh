#!/usr/bin/env bash
# hack/e2e.sh BINARY [1.35]: runs BINARY, test/e2e compiled by
# `go test -race -c`, against the pinned control plane (with 1.35, the
# compatibility one, built by hack/controlplane.sh if missing) as two
# processes side by side, each starting its own apiserver, and prints both
# outputs.
# The suite waits on clocks (grace periods, leases, join timeouts) far more
# than it computes: as one process it took about 25 minutes with the
# machine mostly idle, and make test waited for it last. -run and -skip
# take the same pattern, so every test runs in exactly one half. make test
# compiles the binary once for both Kubernetes versions: two `go test`
# runs compiled the same race-instrumented tree side by side.
set -euo pipefail
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
cd "$(dirname "$0")"
case "${2:-}" in
  "") KUBEHZ_TEST_ASSETS="$(./controlplane.sh)" ;;
  1.35)
    KUBEHZ_TEST_ASSETS="$(./controlplane.sh 1.35)"
    # The harness refuses a control plane that reports another version.
    export KUBEHZ_TEST_KUBE_VERSION=v1.35.8 ;;
  *) echo "usage: hack/e2e.sh BINARY [1.35]" >&2; exit 2 ;;
esac
export KUBEHZ_TEST_ASSETS
cd ../test/e2e
half='^Test(Heal|Upgrade|World)_'
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# Stopped (make test's cleanup, a Ctrl-C), it stops both halves and waits
# while each stops the control plane and the processes it started.
first= second=
trap 'kill -TERM $first $second 2>/dev/null || true; wait; exit 143' TERM INT
# exec: run is only started in the background, and the pid the trap signals
# must be the test binary's, not that of a subshell waiting for it.
run() { exec "$bin" -test.paniconexit0 -test.timeout=30m "$@"; }
run -test.run "$half" >"$out/heal-upgrade" 2>&1 &
first=$!
run -test.skip "$half" >"$out/rest" 2>&1 &
second=$!
status=0
wait "$first" || status=$?
wait "$second" || status=$?
echo "-- Heal, Upgrade and World tests"
cat "$out/heal-upgrade"
echo "-- the other tests"
cat "$out/rest"
exit "$status"

#!/usr/bin/env bash
# Runs every fuzz target of every module for FUZZTIME each (default 30s).
# An input that fails is written under the package's testdata/fuzz/ by the
# go tool: check it in, so `make test` replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-30s}"
for module in shared observer actor test; do
  # "dir target" for every func FuzzXxx in a _test.go file of the module.
  grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' "$module" |
    sed -E 's#^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)$#\1 \2#' | sort -u |
    while read -r dir target; do
      echo "== $dir $target ($fuzztime)"
      (cd "$module" && go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "./${dir#"$module"/}")
    done
done

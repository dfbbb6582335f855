#!/usr/bin/env bash
# hack/failures.sh LABEL LOG [LABEL LOG ...]: the failures in `go test`
# outputs, in a few lines. make test prints the end-to-end logs whole, and a
# failed test's post-mortem (every line the controllers wrote) runs to
# thousands of lines, so a reader who sees only the end of the output (a CI
# page) would not see which check failed. This repeats, last, each failed
# test's name and the first line of each of its messages; in a
# non-verbose run only failed tests print messages.
set -eu
max=60
while (($# >= 2)); do
  label=$1 log=$2
  shift 2
  [[ -f "$log" ]] || continue
  awk -v label="$label" '
    /^-- / { half = $0; next }
    /^ *--- FAIL|^panic: |^FAIL\t|^ +[^ ]+_test\.go:[0-9]+: / {
      if (!shown) { print "== failed: " label; shown = 1 }
      if (half != shownHalf) { print half; shownHalf = half }
      print substr($0, 1, 240)
    }' "$log"
done | head -n "$max"

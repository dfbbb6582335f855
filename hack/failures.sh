#!/usr/bin/env bash
# hack/failures.sh LABEL LOG [LABEL LOG ...]: the failures in `go test`
# outputs, in a few lines. make test prints the end-to-end logs whole, and a
# failed test's post-mortem (every line the controllers wrote) runs to
# thousands of lines, so a reader who sees only the end of the output (a CI
# page) would not see which check failed. This repeats, last, for each log,
# each failed test's name and the first line of each of its messages (in a
# non-verbose run only failed tests print messages), a panic or timeout and
# the tests it names, and a race report's verdict: at most 30 lines a log.
# A failed log with none of these (a TestMain that could not start its
# control plane, a binary killed) gives its last 10 lines instead.
set -eu
while (($# >= 2)); do
  label=$1 log=$2
  shift 2
  [[ -f "$log" ]] || continue
  awk -v label="$label" -v max=30 '
    function show(line) {
      if (!shown) { print "== failed: " label; shown = 1 }
      if (half != shownHalf) { print half; shownHalf = half }
      if (n++ < max) print substr(line, 1, 240)
    }
    { tail[NR % 10] = $0 }
    /^FAIL/ { failed = 1 }
    /^-- / { half = $0; next }
    /^ *--- FAIL|^panic: |^FAIL\t|^ +[^ ]+_test\.go:[0-9]+: |race detected|^\trunning tests:|^\t\tTest/ { show($0) }
    END {
      if (failed && !shown) {
        print "== failed: " label " (last lines)"
        for (i = NR - 9; i <= NR; i++) if (i > 0) print substr(tail[i % 10], 1, 240)
      }
    }' "$log"
done

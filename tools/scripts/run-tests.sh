#!/usr/bin/env bash
# The README's test command: set up, build, then run every lit test (stages,
# driver, diagnostics, format) and every GoogleTest unit test through lit.
# The last line reports the passed and failed counts.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
"$top/tools/scripts/setup-machine.sh" || { echo "tests: passed 0, failed 1 (build failed)"; exit 1; }
build="${LINNET_BUILD_DIR:-$top/build}"
log="$(mktemp)"
/usr/lib/llvm-22/bin/lit -sv "$build/test" "$build/test/unit" | tee "$log"
status=${PIPESTATUS[0]}
# lit's summary lines read `  Passed: 95 (98.96%)`.
count() { sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | head -n 1; }
passed=$(count Passed)
failed=0
for kind in Failed Unresolved 'Timed Out' 'Unexpectedly Passed'; do
  n=$(count "$kind")
  failed=$((failed + ${n:-0}))
done
rm -f "$log"
echo "tests: passed ${passed:-0}, failed $failed"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]

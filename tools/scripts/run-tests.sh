#!/usr/bin/env bash
# The README's test command: set up and build, then
#   1. every lit test (stages, driver, diagnostics, format) and every
#      GoogleTest unit test through lit, on the normal build (build/);
#   2. the lit tests again on the sanitized build (build-fuzz/: ASan and
#      UBSan in every library and tool, the fuzz targets beside them), where
#      a sanitizer report anywhere, even under `not`, fails the run;
#   3. every fuzz target for LINNET_FUZZ_SECONDS (default 30) from its seed
#      corpus, each run counted as one test.
# A line per part with its wall time, then the last line reports the passed
# and failed counts of all of them; any failure makes the exit status
# non-zero.
set -uo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
start=$SECONDS
"$top/tools/scripts/setup-machine.sh" || { echo "tests: passed 0, failed 1 (build failed)"; exit 1; }
echo "build: $((SECONDS - start)) s"
build="${LINNET_BUILD_DIR:-$top/build}"
fuzz_build="${LINNET_FUZZ_BUILD_DIR:-$top/build-fuzz}"
export LINNET_FUZZ_BUILD_DIR="$fuzz_build"
# Both builds' lit runs share one compile cache (test/lit.cfg.py).
export LINNET_TEST_CACHE_DIR="${LINNET_TEST_CACHE_DIR:-$build/test/compile-cache}"
seconds="${LINNET_FUZZ_SECONDS:-30}"
passed=0
failed=0

# lit_run NAME DIR...: runs lit and adds its counts to the totals.
lit_run() {
  local name="$1"
  shift
  local log start=$SECONDS
  log="$(mktemp)"
  /usr/lib/llvm-22/bin/lit -sv "$@" | tee "$log"
  local status=${PIPESTATUS[0]}
  # lit's summary lines read `  Passed: 95 (98.96%)`.
  count() { sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | head -n 1; }
  local ok bad=0 n kind
  ok=$(count Passed)
  for kind in Failed Unresolved 'Timed Out' 'Unexpectedly Passed'; do
    n=$(count "$kind")
    bad=$((bad + ${n:-0}))
  done
  # A lit that stopped early (or found nothing) is a failure too.
  if [ "$status" -ne 0 ] && [ "$bad" -eq 0 ]; then
    bad=1
  fi
  rm -f "$log"
  echo "$name: passed ${ok:-0}, failed $bad ($((SECONDS - start)) s)"
  passed=$((passed + ${ok:-0}))
  failed=$((failed + bad))
}

lit_run "lit" "$build/test" "$build/test/unit"

start=$SECONDS
if "$top/test/fuzz/run-fuzzer.sh" --build; then
  echo "sanitized build: $((SECONDS - start)) s"
  reports="$fuzz_build/sanitizer-reports"
  rm -rf "$reports"
  lit_run "lit (ASan + UBSan)" "$fuzz_build/test"
  # Reports from processes whose test passed anyway (under `not`, or in a
  # binary made by `linnet build`) are failures as well.
  for report in "$reports"/report.*; do
    [ -e "$report" ] || continue
    echo "sanitizer report $report:"
    head -n 40 "$report"
    failed=$((failed + 1))
  done

  fuzz_ok=0
  fuzz_bad=0
  start=$SECONDS
  while read -r target _; do
    log="$fuzz_build/fuzz-$target.log"
    if "$top/test/fuzz/run-fuzzer.sh" "$target" "$seconds" </dev/null >"$log" 2>&1; then
      fuzz_ok=$((fuzz_ok + 1))
      echo "fuzz $target: ${seconds} s, $(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 |
        sed -E 's/^#([0-9]+): cov: ([0-9]+) ft: [0-9]+ corp: ([0-9]+).*/\1 runs, cov \2, corpus \3/')"
    else
      fuzz_bad=$((fuzz_bad + 1))
      echo "fuzz $target: FAILED (inputs in $fuzz_build/artifacts/$target/); the end of $log:"
      tail -n 60 "$log"
    fi
  done < <("$top/test/fuzz/run-fuzzer.sh" --list)
  echo "fuzz: passed $fuzz_ok, failed $fuzz_bad ($((SECONDS - start)) s)"
  passed=$((passed + fuzz_ok))
  failed=$((failed + fuzz_bad))
else
  echo "the sanitized build in $fuzz_build failed"
  failed=$((failed + 1))
fi

echo "tests: passed $passed, failed $failed"
[ "$failed" -eq 0 ]

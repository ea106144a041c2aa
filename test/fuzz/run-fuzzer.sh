#!/usr/bin/env bash
# Builds the libFuzzer target (clang-22, ASan + UBSan) in build-fuzz/ and runs
# it for the given number of seconds (default 60) on FUZZ_JOBS processes
# (default 2, one per core), starting
# from the seed corpus here. Not part of the default test run.
#   test/fuzz/run-fuzzer.sh 1800
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-60}"
build="$top/build-fuzz"
"$top/tools/scripts/setup-machine.sh" >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -S "$top" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINNET_ENABLE_FUZZER=ON \
    -DLINNET_ENABLE_UNITTESTS=OFF \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build "$build" --target linnet-fuzz
work="$build/corpus"
mkdir -p "$work" "$build/artifacts"
# Deep recursion is a finding: keep the stack small enough to notice it.
ulimit -s 8192
exec "$build/bin/linnet-fuzz" "$work" "$top/test/fuzz/corpus" \
  -dict="$top/test/fuzz/linnet.dict" -max_total_time="$seconds" \
  -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
  -fork="${FUZZ_JOBS:-2}" -ignore_crashes=0 -artifact_prefix="$build/artifacts/" -print_final_stats=1

#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, ASan + UBSan) in build-fuzz/ and
# runs one for the given number of seconds (default 60) on FUZZ_JOBS
# processes (default 2, one per core), starting from its seed corpus in
# test/fuzz/corpus/NAME/ and its dictionary test/fuzz/NAME.dict. New inputs
# go to build-fuzz/corpus/NAME/, crashes to build-fuzz/artifacts/NAME/.
#   test/fuzz/run-fuzzer.sh --list          the targets, one a line
#   test/fuzz/run-fuzzer.sh NAME [SECONDS]  build and run one target
#   test/fuzz/run-fuzzer.sh SECONDS         the `source` target
#   test/fuzz/run-fuzzer.sh --build         configure and build everything
#                                           in build-fuzz/ (tools included)
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
build="${LINNET_FUZZ_BUILD_DIR:-$top/build-fuzz}"

# name|longest input|what it parses
targets=(
  "source|8192|Linnet sources: parser, module loading, checkers, binding, graphs"
  "safetensors|16384|safetensors files: header length, JSON header, dtypes, shapes, ranges"
  "shard-index|16384|model.safetensors.index.json, through Checkpoint::open on small shards"
  "config|8192|config.json binding the qwen3_5_moe model, and a built model's config check"
  "checkpoint-binding|8192|checkpoint_binding.json, then renames, prefixes and config fields"
  "script|8192|linnet run --script files, then the calls checked against a session"
  "tokenizer|32768|tokenizer.json, then a text encoded with it, decoded and streamed back"
  "template|16384|chat templates (Jinja), then a chat (messages JSON) rendered with them"
  "serve-request|16384|HTTP requests in pieces, their bodies as chat and text completion requests and as replies"
)

usage() {
  echo "usage: $0 --list | --build | NAME [SECONDS] | SECONDS" >&2
  exit 2
}

configure() {
  "$top/tools/scripts/setup-machine.sh" >/dev/null
  if [ ! -f "$build/build.ninja" ]; then
    CC=clang-22 CXX=clang++-22 cmake -S "$top" -B "$build" -G Ninja \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLINNET_ENABLE_FUZZER=ON \
      -DLINNET_ENABLE_UNITTESTS=OFF \
      -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
  fi
}

[ $# -ge 1 ] || usage
case "$1" in
--list)
  for entry in "${targets[@]}"; do
    IFS='|' read -r name _ what <<<"$entry"
    printf '%-20s %s\n' "$name" "$what"
  done
  exit 0
  ;;
--build)
  configure
  exec cmake --build "$build"
  ;;
esac

if [[ "$1" =~ ^[0-9]+$ ]]; then
  name=source
  seconds="$1"
else
  name="$1"
  seconds="${2:-60}"
fi
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
max_len=""
for entry in "${targets[@]}"; do
  IFS='|' read -r target length _ <<<"$entry"
  [ "$target" = "$name" ] && max_len="$length"
done
if [ -z "$max_len" ]; then
  echo "$0: no fuzz target \`$name\`; the targets are:" >&2
  "$0" --list >&2
  exit 2
fi

configure
cmake --build "$build" --target "linnet-fuzz-$name"
work="$build/corpus/$name"
artifacts="$build/artifacts/$name"
mkdir -p "$work" "$artifacts"
seeds=("$top/test/fuzz/corpus/$name")
# The real checkpoints' chat templates setup-python.sh unpacks seed the
# template target too (they are not the project's to commit).
if [ "$name" = template ] && [ -d "$top/.python/chat-templates" ]; then
  seeds+=("$top/.python/chat-templates")
fi
# Deep recursion is a finding: keep the stack small enough to notice it.
ulimit -s 8192
# In fork mode libFuzzer would skip timeouts and running out of memory
# unless told otherwise: both are findings here.
exec "$build/bin/linnet-fuzz-$name" "$work" "${seeds[@]}" \
  -dict="$top/test/fuzz/$name.dict" -max_total_time="$seconds" \
  -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
  -fork="${FUZZ_JOBS:-2}" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0 \
  -artifact_prefix="$artifacts/" -print_final_stats=1

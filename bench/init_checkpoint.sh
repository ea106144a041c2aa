#!/usr/bin/env bash
# Memory of `linnet init-checkpoint`, which streams tensors to disk: writes a random checkpoint
# of a few GB and prints its size, the time, the writer's peak resident set (/usr/bin/time -v)
# and their ratio. Bounded memory means the RSS stays near that of an empty run whatever the
# checkpoint's size. Peer: `cp` of the written file in the same run, for the disk's speed.
#
# Usage: bench/init_checkpoint.sh [build-dir]   (default: build)
# SIZES="Vocab=... H=..." changes the model (every generic but Batch); the default is ~3.6 GB f32.
set -euo pipefail
source "$(dirname "$0")/sizes.sh"

/usr/bin/time -v "$linnet" init-checkpoint "$top/models/qwen3_5_moe" "${binds[@]}" -o "$work/ck" \
  2> "$work/time.txt"
bytes=$(stat -c %s "$work/ck/model.safetensors")
seconds=$(sed -nE 's/.*Elapsed \(wall clock\) time.*: ([0-9:.]+)/\1/p' "$work/time.txt")
rss_kb=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$work/time.txt")
start=$(date +%s%N)
cp "$work/ck/model.safetensors" "$work/copy.safetensors"
sync "$work/copy.safetensors"
cp_ms=$((($(date +%s%N) - start) / 1000000))
awk -v b="$bytes" -v r="$rss_kb" -v s="$seconds" -v c="$cp_ms" 'BEGIN {
  printf "checkpoint      %.2f GB\n", b / 1e9
  printf "init-checkpoint %s (m:ss), peak RSS %.0f MB = %.3f of the checkpoint\n", s, r / 1024, r * 1024 / b
  printf "cp of the file  %.2f s (the disk, for comparison)\n", c / 1000
}'

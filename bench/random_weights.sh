#!/usr/bin/env bash
# Draw rate of `--random-weights` (RandomWeights: a counter hash per value, on every core): a
# `linnet build` binary of a ~3.6 GB f32 model draws its parameters (`--timings`' load time,
# which is the draw alone: no checkpoint is read) and runs one token; peer: numpy drawing as many
# float32 normals (`default_rng().standard_normal`, one thread) in the same run. Prints values/s
# of both and their ratio; the full-size model's 35 B values take that rate's time on a GPU
# machine before the device check's timings.
#
# Usage: bench/random_weights.sh [build-dir]   (default: build)
# SIZES="Vocab=... H=..." changes the model (every generic but Batch); the default is ~0.9 B values.
set -euo pipefail
source "$(dirname "$0")/sizes.sh"
binds+=(--bind Batch=1)

count=$("$linnet" inspect "$top/models/qwen3_5_moe" "${binds[@]}" | sed -nE 's/^parameters .*\(([0-9]+)\)$/\1/p')
"$linnet" build "$top/models/qwen3_5_moe" "${binds[@]}" -o "$work/model"
"$work/model" --random-weights 1 --tokens 1 --timings > /dev/null 2> "$work/timings.txt"
load=$(sed -nE 's/.*load ([0-9.]+) s.*/\1/p' "$work/timings.txt" | head -n 1)
numpy=$(/usr/bin/python3 - "$count" <<'PY'
import sys, time
import numpy as np
count = int(sys.argv[1])
rng = np.random.default_rng(1)
start = time.perf_counter()
left = count
while left:
    n = min(left, 1 << 24)
    rng.standard_normal(n, dtype=np.float32)
    left -= n
print(time.perf_counter() - start)
PY
)
awk -v n="$count" -v l="$load" -v p="$numpy" -v cores="$(nproc)" 'BEGIN {
  printf "values            %.0f (%.2f GB in f32)\n", n, n * 4 / 1e9
  printf "--random-weights  %.2f s, %.0f M values/s (%d cores)\n", l, n / l / 1e6, cores
  printf "numpy             %.2f s, %.0f M values/s (standard_normal, float32, 1 thread)\n", p, n / p / 1e6
  printf "ratio             %.2f\n", p / l
}'

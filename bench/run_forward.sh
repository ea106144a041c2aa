#!/usr/bin/env bash
# End-to-end `linnet run --entry forward` on a small random qwen3_5_moe checkpoint, f32 and bf16,
# next to the independent numpy reference (test/reference/qwen3_5_moe.py) on the same checkpoint
# and tokens. Prints one table row per (checkpoint dtype, batch shape):
#   compile / load / codegen / run  the four steps `linnet run --timings` reports (seconds)
#   tok/s                           tokens / run seconds (the forward itself, no compilation)
#   RSS MB                          peak resident set of the whole `linnet run` (/usr/bin/time -v)
#   np f32 / np f64                 seconds of the reference's `model.forward` (time.perf_counter),
#                                   weights and activations in float32 / float64
#   ratio                           np f32 / run: above 1, linnet's forward is faster
#
# Usage: bench/run_forward.sh [build-dir]   (default: build)
# Sizes can be changed through the environment: SIZES="Vocab=4096 H=256 ..." (every generic of
# the model but T and Batch), SHAPES="1x256 4x64" (batch x length).
# numpy is Debian's /usr/bin/python3 one, single-threaded reference BLAS unless an optimized
# libblas3 alternative is installed.
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$top/build}"
linnet="$build/bin/linnet"
model="$top/models/qwen3_5_moe"
python=/usr/bin/python3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Conv = 2 * KeyHeads * KeyDim + ValueHeads * ValueDim.
SIZES="${SIZES:-Vocab=4096 H=256 Heads=4 KvHeads=2 HeadDim=64 KeyHeads=2 ValueHeads=4 KeyDim=32 ValueDim=32 Conv=256 Width=4 Experts=16 TopK=4 ExpertInner=128 SharedInner=128 Groups=2 MaxSeq=512}"
SHAPES="${SHAPES:-1x256 4x64}"

binds=()
for size in $SIZES; do binds+=(--bind "$size"); done
vocab="$(sed -n 's/.*Vocab=\([0-9]*\).*/\1/p' <<<"$SIZES")"

# Deterministic token rows: "B x S" ids in [0, Vocab).
tokens() {
  "$python" -c "
import sys
b, s, v = map(int, sys.argv[1:])
print(';'.join(','.join(str((7919 * (r * s + i) + 13) % v) for i in range(s)) for r in range(b)))
" "$1" "$2" "$vocab"
}

# The reference's forward time, float32 then float64, on one checkpoint and token rows.
reference() {
  "$python" - "$top/test/reference" "$1" "$2" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import qwen3_5_moe as ref
rows = np.array([[int(x) for x in r.split(",")] for r in sys.argv[3].split(";")])
times = []
for dtype in (np.float32, np.float64):
    model = ref.load_model(sys.argv[2], dtype=dtype)
    start = time.perf_counter()
    model.forward(rows)
    times.append(time.perf_counter() - start)
print(" ".join(f"{t:.3f}" for t in times))
PY
}

echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p')"
echo "sizes: $SIZES"
printf '%-5s %-6s %8s %6s %8s %8s %8s %7s %8s %8s %6s\n' \
  dtype BxS compile load codegen run tok/s RSS_MB np_f32 np_f64 ratio
for dtype in f32 bf16; do
  "$linnet" init-checkpoint "$model" "${binds[@]}" --seed 1 --dtype "$dtype" -o "$work/$dtype"
  for shape in $SHAPES; do
    b="${shape%x*}" s="${shape#*x}"
    rows="$(tokens "$b" "$s")"
    /usr/bin/time -v -o "$work/time.txt" "$linnet" run "$model" --checkpoint "$work/$dtype" \
      --entry forward --tokens "$rows" --out "$work/logits.npy" --timings 2>"$work/timings.txt"
    # linnet run: compile X s, code generation X s
    # linnet run: load X s, forward X s (N tokens)
    read -r compile codegen < <(sed -n \
      's/^linnet run: compile \([0-9.]*\) s, code generation \([0-9.]*\) s$/\1 \2/p' \
      "$work/timings.txt")
    read -r load run count < <(sed -n \
      's/^linnet run: load \([0-9.]*\) s, forward \([0-9.]*\) s (\([0-9]*\) tokens)$/\1 \2 \3/p' \
      "$work/timings.txt")
    rss="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")"
    read -r np32 np64 < <(reference "$work/$dtype" "$rows")
    awk -v d="$dtype" -v sh="$shape" -v c="$compile" -v l="$load" -v g="$codegen" -v r="$run" \
      -v n="$count" -v m="$rss" -v f="$np32" -v e="$np64" 'BEGIN {
        printf "%-5s %-6s %8.2f %6.2f %8.2f %8.3f %8.1f %7.0f %8.3f %8.3f %6.2f\n",
          d, sh, c, l, g, r, n / r, m / 1024, f, e, f / r }'
  done
done

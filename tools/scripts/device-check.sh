#!/usr/bin/env bash
# The GPU device check, prepared here and run on a GPU machine, which has no
# LLVM or MLIR: only the built binaries and their inputs travel.
#
#   tools/scripts/device-check.sh [--tiny-only] [DIR]
#       builds into DIR (default build/device-check) and packs it into
#       DIR.tar.gz (under the 64 MiB a device call carries; unpacked there):
#       - tiny/one ... tiny/five: GPU binaries (`linnet build --target
#         cuda`) of five tiny configurations (f32, Batch 2; f32, Batch 3
#         with two layer groups, per-expert tensors and odd widths; bf16,
#         Batch 2, whose prompts multiply on the tensor cores from tiles
#         staged in shared memory; bf16, Batch 1, hidden 256, a prompt of
#         150 tokens: the wide tensor-core layout; bf16, Batch 1, a prompt
#         of 1100 tokens: attention on the tensor cores, 18 tiles of 64
#         queries over up to 69 steps of 16 keys), their
#         checkpoints, a
#         script of entry calls each, and the logits of that script on the
#         binary's emulated device, computed here;
#       - full/model-b1, -b8, -b64: the full-size model (Qwen3.6-35B-A3B,
#         bf16) for 1, 8 and 64 slots of 9216 tokens, run with
#         `--random-weights` there (its 70 GB of weights cannot travel);
#       - DIR/run.sh, the part that runs on the device.
#   DIR/run.sh [--device gpu|emulated]
#       on the GPU machine (python3 with numpy): every tiny script on the
#       GPU against the emulated logits (max |difference| / max |logit|
#       within 1e-4), then the full-size timings: an 8192-token prefill and
#       batch-1 decode steps, then batch 8 and 64 decode, each against the
#       limits of issue 14. `--device emulated` runs the tiny part on the
#       emulated device instead (a check of the check, here) and skips the
#       full size.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
linnet="${LINNET:-$top/build/bin/linnet}"
python="${PYTHON:-/usr/bin/python3}"
tiny_only=0
if [ "${1:-}" = "--tiny-only" ]; then
  tiny_only=1
  shift
fi
out="${1:-$top/build/device-check}"
rm -rf "$out"
mkdir -p "$out/tiny" "$out/full"
model="$top/models/qwen3_5_moe"

# tiny NAME BATCH CALLS MAKE_CHECKPOINT_ARGS...
tiny() {
  local name="$1" batch="$2" calls="$3"
  shift 3
  local dir="$out/tiny/$name"
  mkdir -p "$dir"
  "$python" "$top/test/reference/make_checkpoint.py" --out "$dir/ck" "$@" > /dev/null
  echo "$calls" > "$dir/calls.json"
  "$linnet" build "$model" --target cuda --bind "$dir/ck/config.json" --bind "Batch=$batch" -o "$dir/model"
  "$dir/model" --device emulated --checkpoint "$dir/ck" --script "$dir/calls.json" --out "$dir/emulated"
  echo "device-check: tiny/$name built, its emulated logits computed"
}
tiny one 2 '{"calls": [{"entry": "prefill", "tokens": [[1,2,3],[4,5,6]], "pos": 0}, {"entry": "decode", "tokens": [[4],[7]], "pos": 3}, {"entry": "prefill_slots", "tokens": [[5,6,0],[7,8,9]], "slots": [1,0], "lengths": [2,3]}, {"entry": "decode_rows", "tokens": [[10],[11]], "positions": [3,2]}, {"entry": "forward", "tokens": [[1,2]]}, {"entry": "next_token", "tokens": [[1,2]]}]}' \
  --seed 3 --groups 1 --dtype f32
tiny two 3 '{"calls": [{"entry": "forward", "tokens": [[1,2,3,4,5,6],[11,12,13,14,15,16],[21,22,23,24,25,26]]}, {"entry": "prefill", "tokens": [[1,2,3,4],[11,12,13,14],[21,22,23,24]], "pos": 0}, {"entry": "decode_rows", "tokens": [[5],[15],[25]], "positions": [4,4,4]}, {"entry": "decode", "tokens": [[6],[16],[26]], "pos": 5}]}' \
  --seed 21 --groups 2 --prefix model --experts-layout per-expert --vocab 97 --hidden 48 --heads 6 \
  --kv-heads 2 --head-dim 24 --key-heads 1 --value-heads 3 --key-dim 16 --value-dim 8 \
  --conv-width 3 --experts 6 --topk 3 --max-seq 64 --dtype f32
# bf16: the tensor cores sum each mma's products in an order of their own, so
# a sum near a bf16 rounding boundary may round the other way than on the
# emulated device, and such a difference grows through the layers; a wrong
# fragment or staged tile is off by the logits' own size.
tiny three 2 '{"calls": [{"entry": "prefill", "tokens": [[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],[21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40]], "pos": 0}, {"entry": "decode", "tokens": [[4],[7]], "pos": 20}, {"entry": "forward", "tokens": [[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18]]}]}' \
  --seed 5 --groups 1 --dtype bf16
echo 5e-2 > "$out/tiny/three/tolerance"
# bf16 and wide enough (hidden 256, projections of 512 outputs, experts of
# 128 inner, a prompt of 150 tokens) that the prompt's products take the
# tensor cores' wide layout (block tiles of 128 x 128, warps of 32 x 64)
# and its routed experts tiles of 128 sorted rows: the layout the full size
# prefills with, checked here against the emulated device.
tiny four 1 "{\"calls\": [{\"entry\": \"prefill\", \"tokens\": [[$(seq -s, 1 150)]], \"pos\": 0}, {\"entry\": \"decode\", \"tokens\": [[7]], \"pos\": 150}]}" \
  --seed 9 --groups 1 --dtype bf16 --vocab 256 --hidden 256 --heads 4 --kv-heads 2 --head-dim 64 \
  --key-heads 2 --value-heads 4 --key-dim 64 --value-dim 64 --experts 8 --topk 2 \
  --expert-inner 128 --shared-inner 128 --max-seq 256
echo 5e-2 > "$out/tiny/four/tolerance"
# bf16 and a long prompt: the tensor cores' attention (TensorCoreAttention)
# walks 1100 keys in steps of 16 for 18 tiles of 64 queries.
tiny five 1 "{\"calls\": [{\"entry\": \"prefill\", \"tokens\": [[$("$python" -c 'print(",".join(str((7 * i + 3) % 64) for i in range(1100)))')]], \"pos\": 0}, {\"entry\": \"decode\", \"tokens\": [[9]], \"pos\": 1100}]}" \
  --seed 5 --groups 1 --dtype bf16 --rope-theta 10000000 --max-seq 1200
echo 5e-2 > "$out/tiny/five/tolerance"

if [ "$tiny_only" -eq 0 ]; then
  for batch in 1 8 64; do
    "$linnet" build "$model" --target cuda --bind "$model/configs/qwen3_6_35b_a3b.json" \
      --bind "Batch=$batch" --bind MaxSeq=9216 -o "$out/full/model-b$batch"
    echo "device-check: full/model-b$batch built"
  done
fi
cp "$top/tools/scripts/device-check-run.sh" "$out/run.sh"
chmod +x "$out/run.sh"
du -sh "$out"
# What travels: the folder packed (the binaries compress about 3x; unpacked,
# the tiny and full-size binaries and the tiny checkpoints are about 145 MB,
# past the 64 MiB a device call carries; packed, 47 MB with four tiny
# configurations, and the fifth packs to 4.7 MB more).
tar -C "$out" -czf "$out.tar.gz" .
bytes=$(stat -c %s "$out.tar.gz")
echo "device-check: $out.tar.gz, $bytes bytes; on the GPU machine:"
echo "  mkdir -p /tmp/dc && tar -xzf $(basename "$out").tar.gz -C /tmp/dc && /tmp/dc/run.sh"
if [ "$bytes" -ge $((64 * 1024 * 1024)) ]; then
  echo "device-check: $out.tar.gz is over the 64 MiB a device call carries" >&2
  exit 1
fi

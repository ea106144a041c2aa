#!/usr/bin/env python3
"""Tokens/s of prefill and decode on the CPU: linnet next to the numpy reference, same run.

    /usr/bin/python3 bench/run_entries.py [--build build] [--decode-steps 16] [--prefill 128]
                                          [--max-seq 512]

Makes a small random checkpoint with `linnet init-checkpoint` (f32; Vocab 4096, H 256, 2 groups,
16 experts top-4), then for Batch = 1 and Batch = 8 runs one script through `linnet run --script
--timings` (a prefill at position 0, then decode steps) and the same calls through the numpy
reference's Session (test/reference/qwen3_5_moe.py, float32), and prints tokens/s of each entry
and the peak memory of each process. Also times `linnet emit --stage=llvm` of the full-size model
(every entry, down to the LLVM dialect). PyTorch eager is the third peer when Debian's
python3-torch is installed (it is not by default; the table says so).
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "test", "reference"))

SIZES = dict(Vocab=4096, H=256, Heads=4, KvHeads=2, HeadDim=64, KeyHeads=2, ValueHeads=4,
             KeyDim=32, ValueDim=32, Conv=256, Width=4, Experts=16, TopK=4, ExpertInner=128,
             SharedInner=128, Groups=2, MaxSeq=512)


def timed_run(cmd):
    """Runs cmd under /usr/bin/time -v; returns (stdout, stderr, peak RSS in MB)."""
    result = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stderr}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
    return result.stdout, result.stderr, int(rss.group(1)) / 1024 if rss else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(TOP, "build"))
    parser.add_argument("--decode-steps", type=int, default=16)
    parser.add_argument("--prefill", type=int, default=128)
    parser.add_argument("--max-seq", type=int, default=SIZES["MaxSeq"],
                        help="the model's MaxSeq: room for a longer --prefill")
    args = parser.parse_args()
    if args.prefill + args.decode_steps > args.max_seq:
        sys.exit(f"--prefill {args.prefill} and {args.decode_steps} decode steps need "
                 f"--max-seq {args.prefill + args.decode_steps} or more")
    SIZES["MaxSeq"] = args.max_seq
    linnet = os.path.join(args.build, "bin", "linnet")
    model = os.path.join(TOP, "models", "qwen3_5_moe")
    work = tempfile.mkdtemp(prefix="linnet-bench-")
    ckpt = os.path.join(work, "ckpt")
    binds = [f"--bind={k}={v}" for k, v in SIZES.items()]
    subprocess.run([linnet, "init-checkpoint", model, *binds, "--bind=T=f32", "--seed", "1",
                    "-o", ckpt], check=True, capture_output=True)

    import numpy as np
    import qwen3_5_moe as ref
    reference = ref.load_model(ckpt, dtype=np.float32)
    try:
        import torch  # noqa: F401
        torch_note = "installed, not yet wired in"
    except ImportError:
        torch_note = "not installed (Debian's python3-torch)"

    rows = []
    rng = np.random.default_rng(0)
    for batch in (1, 8):
        length = args.prefill if batch == 1 else 16
        prompt = rng.integers(0, SIZES["Vocab"], size=(batch, length)).tolist()
        calls = [{"entry": "prefill", "tokens": prompt, "pos": 0}]
        steps = [rng.integers(0, SIZES["Vocab"], size=(batch, 1)).tolist()
                 for _ in range(args.decode_steps)]
        for i, step in enumerate(steps):
            calls.append({"entry": "decode", "tokens": step, "pos": length + i})
        script = os.path.join(work, f"script{batch}.json")
        json.dump({"calls": calls}, open(script, "w"))
        out = os.path.join(work, f"out{batch}")
        os.makedirs(out, exist_ok=True)
        _, err, rss = timed_run([linnet, "run", model, "--checkpoint", ckpt, "--bind=T=f32",
                                 f"--bind=Batch={batch}", "--script", script, "--out", out,
                                 "--timings"])
        times = [float(m.group(1)) for m in
                 re.finditer(r"call \d+ \w+ ([0-9.]+) s", err)]
        compiled = re.search(r"compile ([0-9.]+) s, code generation ([0-9.]+) s", err)
        if not compiled:
            sys.exit("no --timings compile line in linnet's output:\n" + err[-2000:])
        compile_s = float(compiled.group(1)) + float(compiled.group(2))
        prefill_s, decode_s = times[0], sorted(times[1:])[len(times[1:]) // 2]

        session = reference.session(batch=batch)
        start = time.perf_counter()
        session.prefill(np.array(prompt), 0)
        ref_prefill = time.perf_counter() - start
        ref_decodes = []
        for i, step in enumerate(steps):
            start = time.perf_counter()
            session.decode(np.array(step), length + i)
            ref_decodes.append(time.perf_counter() - start)
        ref_decode = sorted(ref_decodes)[len(ref_decodes) // 2]
        rows.append((batch, length, compile_s, prefill_s, ref_prefill, decode_s, ref_decode, rss))

    ref_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"machine: {os.cpu_count()} cores; sizes {SIZES}; f32; PyTorch eager: {torch_note}")
    print("Batch  prefill S  compile s  prefill tok/s (linnet / numpy = ratio)   "
          "decode tok/s (linnet / numpy = ratio)   linnet RSS MB")
    for batch, length, compile_s, p, rp, d, rd, rss in rows:
        tokens = batch * length
        print(f"{batch:5d}  {length:9d}  {compile_s:9.1f}  "
              f"{tokens / p:10.1f} / {tokens / rp:8.1f} = {rp / p:5.2f}            "
              f"{batch / d:10.1f} / {batch / rd:8.1f} = {rd / d:5.2f}          {rss:8.0f}")
    print(f"numpy reference process peak RSS: {ref_rss:.0f} MB")

    full = os.path.join(TOP, "models", "qwen3_5_moe", "configs", "qwen3_6_35b_a3b.json")
    start = time.perf_counter()
    _, _, rss = timed_run([linnet, "emit", model, "--bind", full, "--stage=llvm", "-o",
                           os.devnull])
    print(f"full-size model (35B config), every entry to the LLVM dialect: "
          f"{time.perf_counter() - start:.1f} s, peak RSS {rss:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

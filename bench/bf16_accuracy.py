#!/usr/bin/env python3
"""How far are linnet's bf16 logits from the mathematics, for builds of different CPUs?

    /usr/bin/python3 bench/bf16_accuracy.py [--build DIR] [NAME=VALUE ...]
        [--cpus x86-64-v4,native] [--prompts 8] [--prompt 256] [--seed 0] [--work /tmp]

One random bf16 checkpoint (`linnet init-checkpoint --dtype bf16 --seed 1`, the sizes of
run_entries.py's SIZES, NAME=VALUE overriding them), one `linnet build` binary per `--cpus` entry
(the code differs with the CPU: `native` on a CPU with AVX512-BF16 multiplies bf16 pairs with
`vdpbf16ps`, `x86-64-v4` widens both operands to f32), and `--prompts` random prompts of
`--prompt` token ids. For each prompt, each binary's logits at the prompt's last position (a
`--script` prefill at position 0) against the numpy reference (test/reference/qwen3_5_moe.py,
float32 activations, the bf16 weights widened): max and rms |difference|. One row per prompt,
then the mean over the prompts. A single prompt says little: bf16 rounding decides which
logits land far off, so builds that sum in different orders trade places from prompt to prompt.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import numpy as np

from benchlib import MODEL, NICE, TOP, begin_run, load_average, log, run
from run_entries import SIZES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(TOP, "build"))
    parser.add_argument("sizes", nargs="*", help="NAME=VALUE overrides of the sizes")
    parser.add_argument("--cpus", default="x86-64-v4,native")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--prompt", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default="/tmp")
    args = parser.parse_args()
    args.dtype, args.threads = "bf16", "1"
    linnet, sizes, _, _ = begin_run(args, SIZES, ("tokens", 0))
    cpus = args.cpus.split(",")
    if args.prompts < 1:
        sys.exit("--prompts must be at least 1")

    sys.path.insert(0, os.path.join(TOP, "test", "reference"))
    import qwen3_5_moe as reference

    work = tempfile.mkdtemp(prefix="linnet-bf16-accuracy-", dir=args.work)
    try:
        checkpoint = os.path.join(work, "ckpt")
        log("linnet init-checkpoint (bf16)")
        run(NICE + [linnet, "init-checkpoint", MODEL,
                    *[f"--bind={k}={v}" for k, v in sizes.items()],
                    "--dtype", "bf16", "--seed", "1", "-o", checkpoint])
        binaries = {}
        for cpu in cpus:
            log(f"linnet build --cpu {cpu}")
            binaries[cpu] = os.path.join(work, f"linnet-{cpu}")
            run(NICE + [linnet, "build", MODEL, "--bind", os.path.join(checkpoint, "config.json"),
                        "--bind=Batch=1", "--cpu", cpu, "-o", binaries[cpu]])
        model = reference.load_model(checkpoint, dtype=np.float32)
        rng = np.random.default_rng(args.seed)
        print(f"load average {load_average()}; sizes: "
              + " ".join(f"{k}={v}" for k, v in sizes.items()))
        print(f"logits at the last of {args.prompt} prompt tokens, |linnet - reference|, "
              f"reference in float32")
        print(f"{'prompt':>6}  " + "  ".join(f"{cpu + ' max':>18} {'rms':>7}" for cpu in cpus))
        totals = {cpu: [0.0, 0.0] for cpu in cpus}
        for index in range(args.prompts):
            prompt = [int(t) for t in rng.integers(0, sizes["Vocab"], args.prompt)]
            script = os.path.join(work, "prefill.json")
            with open(script, "w") as f:
                json.dump({"calls": [{"entry": "prefill", "tokens": [prompt], "pos": 0}]}, f)
            expected = model.session(batch=1).prefill(np.array([prompt]), 0).reshape(-1)
            cells = []
            for cpu in cpus:
                out = os.path.join(work, f"out-{cpu}")
                shutil.rmtree(out, ignore_errors=True)
                run([binaries[cpu], "--checkpoint", checkpoint, "--script", script,
                     "--out", out])
                got = np.load(os.path.join(out, "call_0.npy")).astype(np.float64).reshape(-1)
                difference = got - expected
                worst = float(np.abs(difference).max())
                rms = float(np.sqrt(np.mean(difference ** 2)))
                totals[cpu][0] += worst
                totals[cpu][1] += rms
                cells.append(f"{worst:18.3f} {rms:7.3f}")
            print(f"{index:>6}  " + "  ".join(cells))
        print(f"{'mean':>6}  " + "  ".join(
            f"{totals[cpu][0] / args.prompts:18.3f} {totals[cpu][1] / args.prompts:7.3f}"
            for cpu in cpus))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

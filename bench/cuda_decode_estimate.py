#!/usr/bin/env python3
"""What a full-size decode step of `linnet build --target cuda` costs on paper, against what it
must cost: builds the 35B config (bf16, Batch 1 or --batch N) with `--report`, reads the
`decode` entry's launches and bytes, and sets them beside the least any decode step can move,
computed here from the config and MODEL.md's tensor table (every weight a step needs once: the
embedding's rows, the routed experts its rows choose (8 of 256 for one row; for N rows the
expected number of distinct experts under uniform routing, 256 (1 - (1 - 8/256)^N)),
everything else whole; the DeltaNet layers' recurrent state and conv history of each row read
and written once; the attention caches at a short context). Prints both, their ratio, the
step's time at 4.3 TB/s plus 2 us a launch and 1 us a grid wait against issue 14's target (1.75
ms at batch 1; 3,500 tokens/s at batch 64), and the times the step waits for the device (not
in that time). From 0.5 slots an expert (16 rows) the experts are sorted into tiles and each
chosen expert is read once (ExpertMatmul.cpp); the report bounds their buffer by its whole size,
all E experts a layer, so at batch 64 it counts about 35 experts a layer more than the rows are
expected to choose (printed apart), and the attention caches whole, MaxSeq tokens of each row
(9216; `--max-seq` sets it: a step at a shorter context).

    bench/cuda_decode_estimate.py [--build DIR] [--config JSON] [--batch N] [--max-seq N]

No GPU is needed (ptxas is): this is the compiler's own account, the GPU check is
tools/scripts/device-check.sh."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

BANDWIDTH = 4.3e12  # bytes/s an H200 copies at
LAUNCH = 2e-6  # s a launch costs (MLIR22_NOTES.md 6)
GRID_WAIT = 1e-6  # s a chained kernel's grid wait costs (modelled, not measured)
TARGET = 1.75e-3  # s: issue 14's batch-1 decode step
TOKENS_AT_64 = 3500  # tokens/s: issue 14's 64 concurrent rows


def experts_of(config):
    """The config's text part: (experts, experts a row, an expert's bytes, layers)."""
    t = config.get("text_config", config)
    E, k, I, H = (t["num_experts"], t["num_experts_per_tok"], t["moe_intermediate_size"],
                  t["hidden_size"])
    return E, k, 3 * I * H * 2, t["num_hidden_layers"]


def least_bytes(config, batch=1):
    """The bytes a decode step of `batch` rows at a short context must move, from MODEL.md's
    tables (the routed experts: those the rows are expected to choose, routing uniform)."""
    t = config.get("text_config", config)
    V, H, L = t["vocab_size"], t["hidden_size"], t["num_hidden_layers"]
    nH, nKV, D = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]
    Hk, Hv = t["linear_num_key_heads"], t["linear_num_value_heads"]
    Dk, Dv, K = t["linear_key_head_dim"], t["linear_value_head_dim"], t["linear_conv_kernel_dim"]
    E, k, I, Is = (t["num_experts"], t["num_experts_per_tok"], t["moe_intermediate_size"],
                   t["shared_expert_intermediate_size"])
    types = t["layer_types"]
    bf16, f32 = 2, 4
    C = 2 * Hk * Dk + Hv * Dv
    deltanet = (C * H + Hv * Dv * H + 2 * Hv * H + C * K + 2 * Hv + Dv + H * Hv * Dv) * bf16
    attention = (2 * nH * D * H + 2 * nKV * D * H + H * nH * D + 2 * D) * bf16
    moe_dense = (E * H + 3 * Is * H + H) * bf16  # router, shared expert, its gate
    expert = (2 * I * H + H * I) * bf16
    norms = 2 * H * bf16
    chosen = E * (1 - (1 - k / E) ** batch)  # distinct experts, expected
    weights = batch * H * bf16 + (H + V * H) * bf16  # embedding rows, final norm, lm_head
    state = 0
    for kind in types[:L]:
        weights += norms + moe_dense + chosen * expert
        if kind == "linear_attention":
            weights += deltanet
            state += batch * 2 * (Hv * Dk * Dv * f32 + (K - 1) * C * bf16)  # read and written
        else:
            weights += attention
            state += batch * 2 * nKV * D * bf16  # each row's key and value written
    return weights, state


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_full_size_args(parser)
    parser.add_argument("--batch", type=int, default=1, help="rows a step decodes")
    parser.add_argument("--max-seq", type=int, default=9216,
                        help="MaxSeq: the attention caches' length, which the report counts whole")
    args = parser.parse_args()
    if args.batch < 1 or args.max_seq < 1:
        sys.exit("--batch and --max-seq must be at least 1")
    config = json.load(open(args.config))
    weights, state = least_bytes(config, args.batch)
    least = weights + state
    out = benchlib.full_size_report(args.build, args.config, args.batch, args.max_seq)
    line = benchlib.report_entry(out, "decode")
    if not line:
        sys.exit("no `decode` line in the report:\n" + out[-2000:])
    launches, grid_waits = line["launches"], line["grid_waits"]
    moved, unbounded = line["bytes"], line["unbounded"]
    memory, starts = moved / BANDWIDTH, launches * LAUNCH + grid_waits * GRID_WAIT
    print(f"decode, full size, bf16, batch {args.batch} (MiB = 2^20 bytes):")
    print(f"  least a step must move: {least / 2**20:9.0f} MiB  (weights {weights / 2**20:.0f}, "
          f"state {state / 2**20:.0f})  {least / BANDWIDTH * 1e6:7.1f} us")
    print(f"  the report's kernels:   {moved / 2**20:9.0f} MiB  ({moved / least:.3f} of the least"
          f"{f'; {unbounded} buffers of a run-time size not counted' if unbounded else ''})"
          f"  {memory * 1e6:7.1f} us")
    print(f"  launches: {launches}, grid waits: {grid_waits} ({starts * 1e6:.1f} us at "
          f"{LAUNCH * 1e6:.0f} us a launch, {GRID_WAIT * 1e6:.0f} us a grid wait)")
    print(f"  waits for the device: {line['device_waits']} (not in the step's time: each drains the "
          f"stream, so the launch after it starts late)")
    step = memory + starts
    target = TARGET if args.batch == 1 else args.batch / TOKENS_AT_64 if args.batch == 64 else None
    print(f"  a step: {step * 1e6:.1f} us, {args.batch / step:.0f} tokens/s", end="")
    if target:
        print(f" against {target * 1e6:.0f} us ({step / target:.2f}x the target; the bytes "
              f"alone {memory / target:.2f}x)")
    else:
        print(" (issue 14 sets targets at batch 1 and 64)")
    E, k, expert, layers = experts_of(config)
    if args.batch * k >= E / 2:
        # The grouped form reads each chosen expert once; the report's bound is all E a layer.
        chosen = E * (1 - (1 - k / E) ** args.batch)
        unchosen = (E - chosen) * expert * layers
        step -= unchosen / BANDWIDTH
        print(f"  of that, experts no row is expected to choose: {unchosen / 2**20:.0f} MiB "
              f"({E - chosen:.0f} of {E} a layer); without them a step is {step * 1e6:.1f} us, "
              f"{args.batch / step:.0f} tokens/s" + (f" ({step / target:.2f}x the target)"
                                                     if target else ""))

if __name__ == "__main__":
    main()

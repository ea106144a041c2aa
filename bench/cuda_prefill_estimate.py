#!/usr/bin/env python3
"""What the first token of a full-size prompt costs on paper with `linnet build --target cuda`,
against issue 14's target (80 ms for 8k tokens, one H200): builds the 35B config (bf16, Batch 1)
with `--report --report-tokens N`, which takes the `prefill` entry as called with one row of N
tokens, and reads its launches, grid waits and the bytes its kernels move. Beside them the
multiply-adds the prompt needs, computed here from the config and MODEL.md (every projection
of every token; of the routed experts the 8 a token chooses; attention's scores and weighted
values over the keys each query sees), at the 800 TFLOP/s a bf16 GEMM measures on an H200.

The DeltaNet's scans and a prompt's attention are loops whose steps a block runs in turn,
bound by neither: their time is the instructions the multiprocessors issue
(bench/cuda_issue.py, from the kernels' SASS), added after the rest, whose multiply-adds are
then all but attention's.

The bytes are the report's upper bounds: each kernel's buffers, or the views its blocks take of
them times the blocks, so a tile of a product that many blocks read counts once a block (what
L2 serves, not only what memory does), and attention's blocks of keys run to the cache's
length (MaxSeq), not the prompt's. So the bytes' time is a ceiling, the FLOPs' a floor.

    bench/cuda_prefill_estimate.py [--build DIR] [--config JSON] [--tokens N] [--max-seq N]
                                   [--cache DIR]

No GPU is needed (ptxas is); the GPU check is tools/scripts/device-check.sh."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import cuda_issue  # noqa: E402

BANDWIDTH = 4.3e12  # bytes/s an H200 copies at
FLOPS = 800e12  # bf16 multiply-adds x 2 an H200's GEMM measures (issue 14)
LAUNCH = 2e-6  # s a launch costs (MLIR22_NOTES.md 6)
GRID_WAIT = 1e-6  # s a chained kernel's grid wait costs (modelled)
TARGET = 80e-3  # s: issue 14's first token of an 8k prompt


def prompt_flops(config, tokens):
    """2 x the multiply-adds of one row of `tokens` tokens through the model (MODEL.md): (all
    of them, those of attention's scores and weighted values)."""
    t = config.get("text_config", config)
    V, H, L = t["vocab_size"], t["hidden_size"], t["num_hidden_layers"]
    nH, nKV, D = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]
    Hk, Hv = t["linear_num_key_heads"], t["linear_num_value_heads"]
    Dk, Dv = t["linear_key_head_dim"], t["linear_value_head_dim"]
    E, k, I, Is = (t["num_experts"], t["num_experts_per_tok"], t["moe_intermediate_size"],
                   t["shared_expert_intermediate_size"])
    per_token = 0
    attention = 0
    for kind in t["layer_types"][:L]:
        per_token += E * H + 3 * Is * H + H + k * 3 * I * H  # router, shared expert, experts
        if kind == "linear_attention":
            C = 2 * Hk * Dk + Hv * Dv
            per_token += C * H + Hv * Dv * H + 2 * Hv * H + Hv * Dv * H  # in_proj qkv z a b, out
            per_token += Hv * Dk * Dv * 4  # the delta rule's state read, updated, read out
        else:
            per_token += (2 * nH * D + 2 * nKV * D) * H + nH * D * H  # q and gate, k, v, o
            # scores and weighted values over the keys each query sees: a triangle
            attention += nH * D * 2 * tokens * (tokens + 1) / 2
    # the last token's logits
    return 2 * (per_token * tokens + attention + H * V), 2 * attention


def main():
    args, config = benchlib.parse_prompt_args(__doc__)
    out = benchlib.full_size_report(args.build, args.config, 1, args.max_seq,
                                    ["--report-tokens", str(args.tokens)])
    line = benchlib.report_entry(out, "prefill")
    if not line:
        sys.exit("no `prefill` line in the report:\n" + out[-2000:])
    memory = line["bytes"] / BANDWIDTH
    starts = line["launches"] * LAUNCH + line["grid_waits"] * GRID_WAIT
    flops, attention_flops = prompt_flops(config, args.tokens)
    # Attention's multiply-adds run in its own kernel, at the rate its instructions issue
    # (below), not a GEMM's.
    compute = (flops - attention_flops) / FLOPS
    unbounded = (f" ({line['unbounded']} buffers of a run-time size left out)"
                 if line["unbounded"] else "")
    print(f"prefill, full size, bf16, one row of {args.tokens} tokens (MaxSeq {args.max_seq}):")
    print(f"  the report's kernels move at most {line['bytes'] / 2**30:.1f} GiB"
          f"{unbounded}:"
          f" {memory * 1e3:.1f} ms at {BANDWIDTH / 1e12:.1f} TB/s")
    print(f"  launches: {line['launches']}, grid waits: {line['grid_waits']}: {starts * 1e3:.1f} ms "
          f"at {LAUNCH * 1e6:.0f} us a launch, {GRID_WAIT * 1e6:.0f} us a grid wait; "
          f"{line['device_waits']} waits for the device")
    print(f"  multiply-adds: {flops / 1e12:.1f} TFLOP, {attention_flops / 1e12:.1f} of them "
          f"attention's: the rest {compute * 1e3:.1f} ms at {FLOPS / 1e12:.0f} TFLOP/s")
    loops = 0.0
    for lines, ms in cuda_issue.loop_estimates(args, config):
        print("\n".join("  " + text for text in lines))
        loops += ms * 1e-3
    low = max(memory, compute) + loops + starts
    high = memory + compute + loops + starts
    print(f"  first token: {low * 1e3:.1f} to {high * 1e3:.1f} ms on paper (bytes and the "
          f"rest's FLOPs overlapped, or not; the scans and attention after them), against "
          f"{TARGET * 1e3:.0f} ms at 8192 tokens")


if __name__ == "__main__":
    main()

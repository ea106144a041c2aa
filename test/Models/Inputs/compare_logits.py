#!/usr/bin/env python3
"""Compare linnet's logits (a float32 .npy file) with the independent numpy reference.

    compare_logits.py CHECKPOINT TOKENS LINNET.npy [--entry forward|next_token]
                      [--tolerance 1e-4] [--bf16]

The reference (test/reference/qwen3_5_moe.py, written from MODEL.md alone) runs in float64,
or with bf16 rounding emulated for --bf16. f32 check: the largest absolute difference, relative
to the largest reference logit, must be at most the tolerance: linnet computes in f32 (about
7 significant digits), so over the few layers of a test model rounding stays far below 1e-4 of
the logit scale, while any mistake in the mathematics moves logits by whole percents.

bf16 check (statistical, MODEL.md section 13): every rounding point of the bf16 run differs by
up to 2^-8 relatively and these compound over the layers, so elements cannot be compared
tightly. Instead: the correlation of the two logit sets must be at least 0.99, the mean absolute
difference at most 5% of the reference's logit spread (standard deviation), and the greedy
(argmax) token must agree at 90% of the positions or more (near-ties may flip).
Prints one line with the figures; exits 1 when a check fails.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import numpy as np  # noqa: E402
import qwen3_5_moe as ref  # noqa: E402


def agrees_as_bf16(actual, expected):
    """The statistical bf16 check above: (whether it holds, its figures as text)."""
    actual = actual.astype(np.float64)
    expected = expected.astype(np.float64)
    correlation = np.corrcoef(actual.ravel(), expected.ravel())[0, 1]
    mean_error = np.abs(actual - expected).mean() / expected.std()
    agree = (actual.argmax(-1) == expected.argmax(-1)).mean()
    ok = bool(np.isfinite(actual).all()) and correlation >= 0.99 and mean_error <= 0.05 \
        and agree >= 0.9
    return ok, (f"correlation {correlation:.4f}, mean |difference| / std {mean_error:.3f}, "
                f"greedy agreement {agree:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("tokens")
    parser.add_argument("logits")
    parser.add_argument("--entry", default="forward", choices=["forward", "next_token"])
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--bf16", action="store_true")
    args = parser.parse_args()

    rows = np.array([[int(x) for x in row.split(",")] for row in args.tokens.split(";")])
    model = ref.load_model(args.checkpoint, dtype=np.float64, bf16=args.bf16)
    expected = model.forward(rows) if args.entry == "forward" else model.next_token(rows)
    actual = np.load(args.logits)
    if actual.dtype != np.float32:
        print(f"FAIL: linnet wrote {actual.dtype}, expected float32")
        return 1
    if actual.shape != expected.shape:
        print(f"FAIL: shape {actual.shape}, reference {expected.shape}")
        return 1
    expected = expected.astype(np.float64)
    diff = np.abs(actual.astype(np.float64) - expected)
    scale = np.abs(expected).max()
    if not args.bf16:
        relative = diff.max() / scale
        ok = bool(np.isfinite(actual).all()) and relative <= args.tolerance
        print(f"{'ok' if ok else 'FAIL'}: {args.entry} {actual.shape} max |difference| / max |logit| "
              f"= {relative:.2e} (tolerance {args.tolerance:.0e})")
        return 0 if ok else 1
    ok, figures = agrees_as_bf16(actual, expected)
    print(f"{'ok' if ok else 'FAIL'}: {args.entry} bf16 {actual.shape} {figures}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

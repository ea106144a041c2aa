#!/usr/bin/env python3
"""Run a `linnet run --script` script through the independent numpy reference, and compare.

    reference_script.py CHECKPOINT SCRIPT --batch N [--out DIR] [--compare DIR]
                        [--same I[index]=J[index] ...] [--tolerance 1e-4] [--bf16]
    reference_script.py CHECKPOINT --batch N --prompt-tokens 1,2,3 --generate N

The reference (test/reference/qwen3_5_moe.py, written from MODEL.md alone) runs in float64 with
one `Session` of `batch` slots, with the position rules of DESIGN.md (only `prefill` at 0 and
`prefill_slots` restart a row: `decode_restarts_at_zero=False`).

--out DIR       writes the reference's logits of call i to DIR/call_<i>.npy (float64).
--compare DIR   compares linnet's DIR/call_<i>.npy (float32) with the reference, call by call,
                and prints one line per call. Tolerance: the largest absolute difference,
                relative to the largest reference logit of that call, at most 1e-4. linnet
                computes in f32 (about 7 significant digits), and over the few layers of a test
                model its rounding stays near 1e-6 of the logit scale, while a mistake in the
                mathematics (a wrong position, state that leaks between slots or is not reset)
                moves logits by whole percents.
--bf16          runs the reference with bf16 rounding emulated and compares each call with
                compare_logits.py's statistical bf16 check instead of the tolerance.
--same I[idx]=J[idx]
                compares linnet's call I with linnet's call J, each indexed by an optional numpy
                index (`2=0[:, 3]`: call 2's logits equal those of call 0 at position 3), with
                the same tolerance: the consistency of linnet's own entries.
--generate N    prints the N token ids of greedy generation from the prompt (prefill at 0, then
                decode), ties to the lower id, as `linnet run --generate` does.
Exits 1 when a comparison fails.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import numpy as np  # noqa: E402
import qwen3_5_moe as ref  # noqa: E402
from compare_logits import agrees_as_bf16  # noqa: E402


def run_call(model, session, call):
    entry = call["entry"]
    tokens = np.array(call["tokens"], dtype=np.int64)
    if entry == "forward":
        return model.forward(tokens)
    if entry == "next_token":
        return model.next_token(tokens)
    if entry == "prefill":
        return session.prefill(tokens, call["pos"])
    if entry == "decode":
        return session.decode(tokens, call["pos"])
    if entry == "decode_rows":
        return session.decode_rows(tokens, np.array(call["positions"], dtype=np.int64))
    if entry == "prefill_slots":
        return session.prefill_slots(tokens, np.array(call["slots"], dtype=np.int64),
                                     np.array(call["lengths"], dtype=np.int64))
    raise ValueError(f"unknown entry {entry!r}")


def compare(label, actual, expected, tolerance, bf16=False):
    if actual.dtype != np.float32:
        print(f"FAIL: {label}: linnet wrote {actual.dtype}, expected float32")
        return False
    if actual.shape != expected.shape:
        print(f"FAIL: {label}: shape {actual.shape}, expected {expected.shape}")
        return False
    if bf16:
        ok, figures = agrees_as_bf16(actual, expected)
        print(f"{'ok' if ok else 'FAIL'}: {label} bf16 {actual.shape} {figures}")
        return ok
    expected = expected.astype(np.float64)
    relative = np.abs(actual.astype(np.float64) - expected).max() / np.abs(expected).max()
    ok = bool(np.isfinite(actual).all()) and relative <= tolerance
    print(f"{'ok' if ok else 'FAIL'}: {label} {actual.shape} max |difference| / max |logit| "
          f"= {relative:.2e} (tolerance {tolerance:.0e})")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoint")
    parser.add_argument("script", nargs="?")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--out")
    parser.add_argument("--compare")
    parser.add_argument("--same", action="append", default=[])
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--prompt-tokens")
    parser.add_argument("--generate", type=int)
    # The prompt's ids in a file (what `linnet tokenize` printed).
    parser.add_argument("--prompt-tokens-file")
    args = parser.parse_args()

    model = ref.load_model(args.checkpoint, dtype=np.float64, bf16=args.bf16)
    session = model.session(batch=args.batch, decode_restarts_at_zero=False)

    if args.generate is not None:
        if args.prompt_tokens_file:
            with open(args.prompt_tokens_file) as f:
                args.prompt_tokens = f.read().strip()
        prompt = [int(x) for x in args.prompt_tokens.split(",")]
        logits = session.prefill(np.array([prompt] * args.batch, dtype=np.int64), 0)
        generated = []
        pos = len(prompt)
        while True:
            token = int(np.argmax(logits[0]))  # the first maximum: ties to the lower id
            generated.append(token)
            if len(generated) == args.generate:
                break
            logits = session.decode(np.full((args.batch, 1), token, dtype=np.int64), pos)
            pos += 1
        print(" ".join(str(t) for t in generated))
        return 0

    ok = True
    if args.script:
        with open(args.script) as f:
            calls = json.load(f)["calls"]
        for i, call in enumerate(calls):
            expected = run_call(model, session, call)
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                np.save(os.path.join(args.out, f"call_{i}.npy"), expected)
            if args.compare:
                actual = np.load(os.path.join(args.compare, f"call_{i}.npy"))
                ok &= compare(f"call {i} {call['entry']}", actual, expected, args.tolerance,
                              args.bf16)
    for same in args.same:
        match = re.fullmatch(r"(\d+)(\[[^=]*\])?=(\d+)(\[.*\])?", same.replace(" ", ""))
        if not match or not args.compare:
            print(f"FAIL: --same {same!r}: expected I[index]=J[index] and --compare DIR")
            return 1
        sides = []
        for call, index in ((match.group(1), match.group(2)), (match.group(3), match.group(4))):
            logits = np.load(os.path.join(args.compare, f"call_{call}.npy"))
            sides.append(eval("logits" + (index or ""), {"logits": logits}))  # noqa: S307
        ok &= compare(f"call {same.replace(' ', '').replace('=', ' = call ')}", sides[0],
                      sides[1], args.tolerance)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

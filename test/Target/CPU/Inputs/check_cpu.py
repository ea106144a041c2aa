"""Checks the printMemrefF32 output of a CPU-pipeline numeric test against numpy.

Usage: check_cpu.py CASE < mlir-runner-output

Each test's inputs are generated inside the MLIR program by the same formula
as `pattern` below (multiples of 1/4 in [-1.25, 1.5]), so the reference needs
no data files. Prints `PASS CASE` or the worst mismatch, and exits non-zero
on a mismatch.
"""
import re
import sys

import numpy as np


def pattern(rows, cols, seed):
    """value(i, j) = ((7 i + j + seed) mod 11 - 5) / 4, as in the tests' @init."""
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    return (((7 * i + j + seed) % 11) - 5).astype(np.float32) * np.float32(0.25)


def to_bf16(x):
    """Rounds f32 to bf16 (round to nearest even) and back to f32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def parse_memrefs(text):
    """All memrefs printed by printMemrefF32, as numpy arrays."""
    arrays = []
    for block in re.split(r"Unranked Memref", text)[1:]:
        sizes = [int(s) for s in re.search(r"sizes = \[([^\]]*)\]", block).group(1).split(",") if s.strip()]
        data = block.split("data =", 1)[1]
        values = re.findall(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", data)
        arrays.append(np.array([float(v) for v in values], dtype=np.float32).reshape(sizes))
    return arrays


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def references(case):
    """(expected arrays, absolute tolerance, why that tolerance)."""
    if case == "matmul_f32":
        a, b = pattern(37, 53, 0), pattern(53, 29, 3)
        # Products and partial sums are multiples of 1/16 below 2^10: exact in f32.
        return [a @ b, a @ b], 0.0, "exact: every partial sum is representable"
    if case == "matmul_transposed":
        a, w = pattern(37, 53, 0), pattern(29, 53, 3)
        # As matmul_f32: every partial sum is exact in f32, in any order.
        return [a @ w.T, a @ w.T], 0.0, "exact: every partial sum is representable"
    if case == "matmul_transposed_bf16":
        a, w = pattern(37, 70, 0), pattern(29, 70, 3)
        # Multiples of 1/4 are exact in bf16; every partial sum of their
        # products is exact in f32, in any order and any pairing of lanes.
        full = a @ w.T
        return [full, full, full[:1], full[:1]], 0.0, "exact: every partial sum is representable"
    if case == "dot_product_lanes":
        a, w = pattern(3, 256, 0), pattern(512, 256, 3)
        # Multiples of 1/16 below 2^10 in every partial sum: exact in any order.
        return [a @ w.T], 0.0, "exact: every partial sum is representable"
    if case == "matmul_bf16":
        a, b = pattern(33, 70, 0), pattern(70, 45, 5)
        # bf16 inputs are exact (multiples of 1/4); f32 accumulation is exact;
        # the result is rounded once to bf16, as numpy's to_bf16 does.
        return [to_bf16(a @ b)], 0.0, "exact: one bf16 rounding of an exact f32 sum"
    if case == "softmax":
        x = pattern(13, 50, 2) * np.float32(3.0)
        # exp in f32 (libm or polynomial) and a 50-term f32 sum: a few ulp.
        return [softmax(x.astype(np.float64)).astype(np.float32)], 1e-6, "f32 exp and sum"
    if case == "gather":
        table = pattern(10, 24, 1)
        ids = (np.arange(17) * 3) % 10
        return [table[ids]], 0.0, "a gather copies values"
    if case == "scf_for":
        x, w = pattern(7, 16, 0), pattern(16, 16, 4) * np.float32(0.25)
        for _ in range(4):
            x = np.float32(0.5) * (x @ w) + np.float32(1.0)
        # Four chained f32 matmuls of 16 terms; the order of the sums differs.
        return [x], 1e-4, "four chained f32 matmuls, summation order differs"
    if case == "select":
        a, b = pattern(19, 35, 0), pattern(19, 35, 6)
        mask = a > b
        return [np.where(mask, a, b), np.where(mask, a - b, np.float32(0))], 0.0, "selects copy values"
    raise SystemExit(f"unknown case {case}")


PRINT_RTOL = 1e-5


def main():
    case = sys.argv[1]
    got = parse_memrefs(sys.stdin.read())
    expected, tolerance, why = references(case)
    if len(got) != len(expected):
        print(f"FAIL {case}: {len(got)} results printed, {len(expected)} expected")
        return 1
    for index, (g, e) in enumerate(zip(got, expected)):
        if g.shape != e.shape:
            print(f"FAIL {case}: result {index} has shape {g.shape}, expected {e.shape}")
            return 1
        # printMemrefF32 prints 6 significant digits: allow that rounding on
        # top of the case's own tolerance.
        allowed = tolerance + PRINT_RTOL * np.abs(e)
        excess = np.abs(g - e) - allowed
        if g.size and not np.all(excess <= 0):
            worst = np.unravel_index(np.argmax(excess), e.shape)
            print(f"FAIL {case}: result {index} at {worst}: {g[worst]} vs {e[worst]} "
                  f"(tolerance {tolerance}: {why})")
            return 1
    print(f"PASS {case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

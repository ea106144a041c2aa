"""Shared pieces of the numeric tests' numpy references.

The tests print each result with printMemrefF32/printMemrefI32 under
mlir-runner; `read_results` parses that output from stdin, `sin_input`
rebuilds the inputs of Inputs/generators.mlir, and `compare` prints one
PASS/FAIL line per result for FileCheck.
"""
import re
import sys

import numpy as np

COEFFICIENTS = (0.37, 0.71, 1.13, 0.53)


def sin_input(shape, seed, scale=1.0, bias=0.0):
    """scale * sin(seed + sum_d COEFFICIENTS[d] * i_d) + bias, like @sin_Nd."""
    index = np.indices(shape, dtype=np.float64)
    total = np.full(shape, seed, dtype=np.float64)
    for axis in range(len(shape)):
        total += COEFFICIENTS[axis] * index[axis]
    return scale * np.sin(total) + bias


def modular_input(shape, coefficients, divisor):
    """((sum_d coefficients[d] * i_d) mod 17 - 8) / divisor: exact in bf16 and f32 for a power
    of two divisor, like the @inputs generators of the CUDA target's emulated tests."""
    index = np.indices(shape)
    total = sum(c * index[axis] for axis, c in enumerate(coefficients))
    return (total % 17 - 8) / divisor


def read_results(stream=sys.stdin):
    """The memrefs printed by printMemref*, in order, as numpy arrays."""
    text = stream.read()
    results = []
    for chunk in text.split("Unranked Memref")[1:]:
        sizes = re.search(r"sizes = \[([^\]]*)\]", chunk).group(1)
        shape = [int(s) for s in sizes.split(",") if s.strip()]
        data = chunk.split("data =", 1)[1]
        numbers = re.findall(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[+-]?\d+)?)", data)
        values = np.array([float(n) for n in numbers], dtype=np.float64)
        results.append(values.reshape(shape))
    return results


def compare(name, actual, expected, atol, rtol):
    """Prints `name: PASS` when all elements agree within atol + rtol*|e|."""
    expected = np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        print(f"{name}: FAIL shape {list(actual.shape)} != {list(expected.shape)}")
        return
    error = np.abs(actual - expected)
    both_nan = np.isnan(actual) & np.isnan(expected)
    bad = ~(error <= atol + rtol * np.abs(expected)) & ~both_nan
    error = np.where(both_nan, 0.0, error)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        print(f"{name}: FAIL at {where}: got {actual[where]}, "
              f"expected {expected[where]} ({int(bad.sum())} elements)")
    else:
        print(f"{name}: PASS (max error {error.max() if error.size else 0:.2e})")


def to_bf16(values):
    """Rounds to the nearest bf16 (ties to even), returned as float64."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def attention(q, k, v, offset, scale, lengths=None, rounded=None):
    """Causal grouped-query attention from the definition, one query at a
    time over its allowed keys (j <= offset[b] + i, j < lengths[b]); with
    `rounded` (a rounding function: to_bf16) each score and each weight is
    rounded before use and the output once, as the CUDA target's prompt
    attention rounds them (HF's bf16 eager attention)."""
    keep = rounded or (lambda x: x)
    batch, query_heads, queries, _ = q.shape
    key_heads, keys = k.shape[1], k.shape[2]
    out = np.zeros(q.shape[:3] + (v.shape[3],))
    for b in range(batch):
        for h in range(query_heads):
            kv = h // (query_heads // key_heads)
            for i in range(queries):
                allowed = [j for j in range(keys)
                           if j <= offset[b] + i
                           and (lengths is None or j < lengths[b])]
                if not allowed:
                    continue
                scores = keep(np.array([scale * np.dot(q[b, h, i], k[b, kv, j])
                                        for j in allowed]))
                weights = keep(np.exp(scores - scores.max()))
                total = sum(w * v[b, kv, j] for w, j in zip(weights, allowed))
                out[b, h, i] = keep(total / weights.sum())
    return out


def delta_rule(q, k, v, beta, g, initial, lengths):
    """The gated delta rule of MODEL.md section 8.7 in matrix form, one row and
    head at a time: (out [B, S, N, V], final state [B, N, K, V])."""
    batch, steps, heads, _ = q.shape
    out = np.zeros(q.shape[:3] + (v.shape[3],))
    final = initial.copy()
    for b in range(batch):
        for n in range(heads):
            state = initial[b, n].copy()            # [K, V]
            for t in range(min(lengths[b], steps)):
                decayed = np.exp(g[b, t, n]) * state
                u = beta[b, t, n] * (v[b, t, n] - decayed.T @ k[b, t, n])
                state = decayed + np.outer(k[b, t, n], u)
                out[b, t, n] = state.T @ q[b, t, n]
            final[b, n] = state
    return out, final

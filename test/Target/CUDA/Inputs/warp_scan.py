"""Reference for emulated_warp_scan_vectors.mlir: the gated delta rule of
MODEL.md 8.7 in numpy (reference.delta_rule) on the test's inputs, the output
and final state of its three calls (keys and queries in buffers of their
own, then from element 1 of rows of 65, then gates of -13 to -91)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "Conversion", "LinnetToLinalg", "Inputs"))
from reference import compare, delta_rule, modular_input  # noqa: E402


TOKENS = 67


def inputs(shape, x):
    return modular_input(shape, x, 64.0)


def gates(modulus, add, factor):
    i0, i1, i2 = np.indices((3, TOKENS, 2))
    return ((i0 + 2 * i1 + 3 * i2) % modulus + add) * factor


q = inputs((3, TOKENS, 2, 64), (11, 7, 3, 5))
k = inputs((3, TOKENS, 2, 64), (13, 5, 7, 3))
q_offset = inputs((3, TOKENS, 2, 65), (11, 7, 3, 5))[..., 1:]
k_offset = inputs((3, TOKENS, 2, 65), (13, 5, 7, 3))[..., 1:]
v = inputs((3, TOKENS, 2, 40), (7, 11, 5, 2))
initial = inputs((3, 2, 64, 40), (5, 3, 2, 7))
beta = gates(5, 1, 0.125)
g = gates(7, 1, -0.0625)
lengths = [TOKENS, 37, 0]

values = np.array([float(line) for line in sys.stdin.read().split()])
sizes = [3 * TOKENS * 2 * 40, 3 * 2 * 64 * 40]
calls = (("aligned", q, k, g), ("offset", q_offset, k_offset, g),
         ("decaying", q, k, gates(7, 1, -13.0)))
if values.size != len(calls) * sum(sizes):
    print(f"FAIL: {values.size} values printed, expected {len(calls) * sum(sizes)}")
    sys.exit(0)
at = 0
for name, qs, ks, gs in calls:
    out, final = delta_rule(qs, ks, v, beta, gs, initial, lengths)
    compare(f"{name} output", values[at:at + sizes[0]].reshape(out.shape), out,
            1e-5, 1e-4)
    at += sizes[0]
    compare(f"{name} final state", values[at:at + sizes[1]].reshape(final.shape),
            final, 1e-5, 1e-4)
    at += sizes[1]

"""Reference for emulated_tensor_core_attention.mlir: causal grouped-query
attention from the definition (reference.attention, one query at a time over
its allowed keys), with the roundings of the CUDA target's prompt attention (HF's bf16 eager
attention): each score scale * q.k rounded to bf16, the softmax in f64, each
weight exp(s - max) rounded to bf16 before it multiplies the values and
before the sum that divides, the output rounded to bf16 once.

Tolerance: 1e-2 absolute plus 1e-2 relative. The kernel sums in f32 (the
reference in f64), so a score or weight within an f32 rounding of a bf16
tie may round the other way: one weight off by a bf16 step (2^-8 of it)
moves an output by at most that share of one value (|v| <= 0.5), and the
output's own rounding is 2^-9 of it. A wrong fragment, mask or rescaling
moves outputs by tenths."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                "Conversion", "LinnetToLinalg", "Inputs"))
from reference import attention, compare, modular_input, to_bf16  # noqa: E402


def inputs(shape, x):
    return modular_input(shape, x, 16.0)


q = inputs((2, 4, 70, 32), (11, 7, 3, 5))
k = inputs((2, 2, 80, 32), (13, 5, 7, 3))
v = inputs((2, 2, 80, 32), (7, 11, 5, 2))
# Rising and falling scores (@ramps): query row s is +1 or -1 (s / 8 even or odd), key j
# is j / 8, in element 0 alone.
ramp_q = np.zeros(q.shape)
ramp_q[..., 0] = np.where((np.arange(q.shape[2]) // 8) % 2 == 0, 1.0, -1.0)
ramp_k = np.zeros(k.shape)
ramp_k[..., 0] = np.arange(k.shape[2]) / 8.0
values = np.array([float(line) for line in sys.stdin.read().split()])
half = q.shape[:3] + (v.shape[3],)
count = int(np.prod(half))
if values.size != 3 * count:
    print(f"FAIL: {values.size} values printed, expected {3 * count}")
    sys.exit(0)
compare("with lengths", values[:count].reshape(half),
        attention(q, k, v, [5, 0], 0.25, lengths=[77, 40], rounded=to_bf16), 1e-2, 1e-2)
compare("without lengths", values[count:2 * count].reshape(half),
        attention(q, k, v, [0, 10], 0.25, rounded=to_bf16), 1e-2, 1e-2)
compare("maxima moving in one row of a lane", values[2 * count:].reshape(half),
        attention(ramp_q, ramp_k, v, [0, 10], 0.25, rounded=to_bf16), 1e-2, 1e-2)

"""numpy reference for expert-matmul-exec.mlir: one matrix-vector product
per (row, slot) with the weights of the chosen expert, zero for an id
outside [0, X); the bf16 case rounds inputs and result like the test."""
import numpy as np

from reference import compare, read_results, sin_input, to_bf16


def expert_matmul(x, w, experts):
    rows, slots = experts.shape
    y = np.zeros((rows, slots, w.shape[1]))
    for r in range(rows):
        for j in range(slots):
            e = experts[r, j]
            if 0 <= e < w.shape[0]:
                y[r, j] = w[e] @ (x[r] if x.ndim == 2 else x[r, j])
    return y


experts = np.array([[0, 2], [1, 3], [-1, 2]])
x = sin_input((3, 5), 0.1)
x3 = sin_input((3, 2, 5), 0.2)
w = sin_input((3, 4, 5), 0.3)
results = read_results()
compare("expert_matmul shared input", results[0],
        expert_matmul(x, w, experts), 1e-5, 1e-4)
compare("expert_matmul per-slot input", results[1],
        expert_matmul(x3, w, experts), 1e-5, 1e-4)
compare("expert_matmul bf16", results[2],
        to_bf16(expert_matmul(to_bf16(x), to_bf16(w), experts)), 0, 1e-5)

"""The mathematics of linnet.expert_matmul, for the numpy references of its
tests: one matrix-vector product per (row, slot) with the weights of the
chosen expert, zero for an id outside [0, X)."""
import numpy as np


def expert_matmul(x, w, experts):
    rows, slots = experts.shape
    y = np.zeros((rows, slots, w.shape[1]))
    for r in range(rows):
        for j in range(slots):
            e = experts[r, j]
            if 0 <= e < w.shape[0]:
                y[r, j] = w[e] @ (x[r] if x.ndim == 2 else x[r, j])
    return y

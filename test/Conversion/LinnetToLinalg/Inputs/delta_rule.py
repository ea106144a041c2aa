"""numpy reference for delta-rule-exec.mlir: the gated delta rule of
MODEL.md section 8.7 in matrix form, one row and head at a time."""
import numpy as np

from reference import compare, read_results, sin_input


def delta_rule(q, k, v, beta, g, initial, lengths):
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


shape = (3, 5, 2, 3)   # B, S, N, K
q = sin_input(shape, 0.1, 0.5)
k = sin_input(shape, 0.2, 0.5)
v = sin_input((3, 5, 2, 4), 0.3)
beta = sin_input((3, 5, 2), 0.4, 0.4, 0.5)
g = sin_input((3, 5, 2), 0.5, 0.3, -0.4)
initial = sin_input((3, 2, 3, 4), 0.6, 0.5)
out, final = delta_rule(q, k, v, beta, g, initial, [5, 3, 0])
results = read_results()
compare("delta_rule output", results[0], out, 1e-5, 1e-4)
compare("delta_rule final state", results[1], final, 1e-5, 1e-4)

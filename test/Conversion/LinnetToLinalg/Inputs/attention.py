"""numpy reference for attention-exec.mlir: causal grouped-query attention
written from the definition (one query at a time over its allowed keys)."""
import numpy as np

from reference import compare, read_results, sin_input


def attention(q, k, v, offset, scale, lengths=None):
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
                scores = np.array([scale * np.dot(q[b, h, i], k[b, kv, j])
                                   for j in allowed])
                weights = np.exp(scores - scores.max())
                weights /= weights.sum()
                out[b, h, i] = sum(w * v[b, kv, j]
                                   for w, j in zip(weights, allowed))
    return out


q = sin_input((2, 4, 3, 7), 0.1)
k = sin_input((2, 2, 5, 7), 0.2)
v = sin_input((2, 2, 5, 6), 0.3)
results = read_results()
compare("attention", results[0],
        attention(q, k, v, [2, -1], 0.35, lengths=[4, 2]), 1e-5, 1e-4)
compare("attention without lengths", results[1],
        attention(q, k, v, [1, 0], 0.35), 1e-5, 1e-4)

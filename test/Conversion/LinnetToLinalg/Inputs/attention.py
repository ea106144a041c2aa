"""numpy reference for attention-exec.mlir: causal grouped-query attention
written from the definition (reference.attention: one query at a time over
its allowed keys)."""

from reference import attention, compare, read_results, sin_input


q = sin_input((2, 4, 3, 7), 0.1)
k = sin_input((2, 2, 5, 7), 0.2)
v = sin_input((2, 2, 5, 6), 0.3)
results = read_results()
compare("attention", results[0],
        attention(q, k, v, [2, -1], 0.35, lengths=[4, 2]), 1e-5, 1e-4)
compare("attention without lengths", results[1],
        attention(q, k, v, [1, 0], 0.35), 1e-5, 1e-4)

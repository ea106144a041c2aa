"""numpy reference for delta-rule-exec.mlir: the gated delta rule of
MODEL.md section 8.7 (reference.delta_rule)."""
from reference import compare, delta_rule, read_results, sin_input

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

"""numpy reference for expert-matmul-exec.mlir: one matrix-vector product
per (row, slot) with the weights of the chosen expert, zero for an id
outside [0, X); the bf16 case rounds inputs and result like the test. The
grouped cases have 13 rows, and 300 (600 slots, ids from a formula)."""
import numpy as np

from expert_matmul_reference import expert_matmul
from reference import compare, read_results, sin_input, to_bf16


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

grouped = np.array([[0, 2], [1, 0], [2, 0], [0, 1], [1, 2], [0, 2], [3, 0],
                    [0, 1], [2, 1], [0, 2], [1, 0], [0, -1], [2, 0]])
gx = sin_input((13, 5), 0.1)
gx3 = sin_input((13, 2, 5), 0.2)
compare("expert_matmul grouped shared input", results[3],
        expert_matmul(gx, w, grouped), 1e-5, 1e-4)
compare("expert_matmul grouped per-slot input", results[4],
        expert_matmul(gx3, w, grouped), 1e-5, 1e-4)

many = np.array([[(5 * r + 3 * j + r * r % 7) % 5 - 1 for j in range(2)]
                 for r in range(300)])
# 5e-5 absolute: the inputs' sines of arguments up to 3000 differ by more
# between f32 and f64 (a slot given another's row would be off by 0.1).
compare("expert_matmul grouped, 600 slots", results[5],
        expert_matmul(sin_input((300, 2, 5), 0.2), w, many), 5e-5, 1e-4)

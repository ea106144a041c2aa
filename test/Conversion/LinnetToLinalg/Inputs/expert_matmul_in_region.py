"""numpy reference for expert-matmul-in-region.mlir: the per-slot products
of expert-matmul-exec.mlir, computed in two tiles of outputs inside a
region, their slots in loops."""
import numpy as np

from expert_matmul_reference import expert_matmul
from reference import compare, read_results, sin_input

experts = np.array([[0, 2], [1, 3], [-1, 2]])
x3 = sin_input((3, 2, 5), 0.2)
w = sin_input((3, 4, 5), 0.3)
results = read_results()
compare("expert_matmul in a region, slots in loops", results[0],
        expert_matmul(x3, w, experts), 1e-5, 1e-4)

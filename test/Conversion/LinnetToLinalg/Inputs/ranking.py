"""numpy reference for ranking-exec.mlir: a stable sort on the key
(NaN first, then descending value, then ascending index) gives both the
ranks and the top-k."""
import numpy as np

from reference import compare, read_results

NAN = float("nan")
x = np.array([[0.5, -1.0, 2.0, 0.5, 3.0, -2.0, 2.0],
              [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
              [-0.25, NAN, 4.0, -0.0, 0.0, NAN, -7.5]])


def order(row):
    """Indices of `row` from the largest element down."""
    return sorted(range(len(row)),
                  key=lambda i: (0 if np.isnan(row[i]) else 1,
                                 0 if np.isnan(row[i]) else -row[i], i))


ranks = np.zeros(x.shape)
top_indices = np.zeros((x.shape[0], 3))
top_values = np.zeros((x.shape[0], 3))
for r, row in enumerate(x):
    o = order(row)
    for position, i in enumerate(o):
        ranks[r, i] = position
    top_indices[r] = o[:3]
    top_values[r] = row[o[:3]]

results = read_results()
compare("rank", results[0], ranks, 0, 0)
compare("topk values", results[1], top_values, 0, 0)
compare("topk indices", results[2], top_indices, 0, 0)

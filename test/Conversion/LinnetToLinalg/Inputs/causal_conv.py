"""numpy reference for causal-conv-exec.mlir: the causal depthwise
convolution in the form of MODEL.md section 8.2 (taps[:, W - 1] weighs the
current token, earlier tokens come from the history), and the new history
as the last W - 1 rows of history ‖ x[:length]."""
import numpy as np

from reference import compare, read_results, sin_input


def causal_conv(x, taps, history, lengths):
    batch, steps, channels = x.shape
    width = taps.shape[1]
    y = np.zeros(x.shape)
    new_history = np.zeros(history.shape)
    for b in range(batch):
        def token(t):   # t < 0 reads the history
            return x[b, t] if t >= 0 else history[b, width - 1 + t]
        for t in range(steps):
            for j in range(width):
                y[b, t] += taps[:, j] * token(t - (width - 1) + j)
        length = min(max(lengths[b], 0), steps)
        kept = np.concatenate([history[b], x[b, :length]])
        new_history[b] = kept[len(kept) - (width - 1):]
    return y, new_history


x = sin_input((4, 5, 3), 0.1)
taps = sin_input((3, 4), 0.2)
history = sin_input((4, 3, 3), 0.3)
y, new_history = causal_conv(x, taps, history, [7, 2, 0, -3])
results = read_results()
compare("causal_conv output", results[0], y, 1e-5, 1e-4)
compare("causal_conv new history", results[1], new_history, 1e-5, 1e-4)

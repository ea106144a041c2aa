#!/usr/bin/env python3
"""Load a checkpoint folder with the numpy reference and run `forward` on four tokens.

Prints the stored float dtype, the tensor count, the logits' shape, whether they are finite,
the name prefix when it is not `model.language_model.`, and the config's dtype and layer count.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "reference"))
import numpy as np  # noqa: E402
import qwen3_5_moe as ref  # noqa: E402
import safetensors_io as st  # noqa: E402

folder = sys.argv[1]
header = st.read_header(os.path.join(folder, st.SINGLE_NAME))
header = header[0] if isinstance(header, tuple) else header
dtypes = sorted({e["dtype"] for n, e in header.items() if n != "__metadata__"})
names = [n for n in header if n != "__metadata__"]
model = ref.load_model(folder)
logits = model.forward(np.array([[1, 2, 3, 4]]))
prefix = "" if any(n.startswith(ref.LANGUAGE_MODEL_PREFIX) for n in names) else ", prefix model.layers."
config = json.load(open(os.path.join(folder, "config.json")))["text_config"]
print(f"{'/'.join(dtypes)} {len(names)} tensors, logits {logits.shape}, "
      f"{'finite' if np.isfinite(logits).all() else 'NOT finite'}{prefix} "
      f"dtype {config['dtype']} layers {config['num_hidden_layers']}")

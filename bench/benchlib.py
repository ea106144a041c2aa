"""What the Python benchmarks under bench/ share: paths, running a command, the sizes of the
model's DeltaNet convolution, and the tensors of a checkpoint's safetensors headers."""
import json
import os
import struct
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(TOP, "models", "qwen3_5_moe")
# Set-up steps (builds, conversion, checkpoint writing) leave the cores to the measured runs.
NICE = ["nice", "-n", "19"]


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(cmd, env=None):
    """Runs cmd; on failure exits with its output. Returns (stdout, stderr)."""
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n"
                 f"{(result.stdout or '')[-4000:]}{(result.stderr or '')[-4000:]}")
    return result.stdout, result.stderr


def load_average():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def conv_size(sizes):
    """The DeltaNet convolution's channels, as the model derives them from its head sizes."""
    return 2 * sizes["KeyHeads"] * sizes["KeyDim"] + sizes["ValueHeads"] * sizes["ValueDim"]


def checkpoint_tensors(checkpoint):
    """(name, header entry) of every tensor in the checkpoint's .safetensors files."""
    files = sorted(f for f in os.listdir(checkpoint) if f.endswith(".safetensors"))
    if not files:
        sys.exit(f"no .safetensors in {checkpoint}")
    for f in files:
        with open(os.path.join(checkpoint, f), "rb") as stream:
            header = json.loads(stream.read(struct.unpack("<Q", stream.read(8))[0]))
        for name, tensor in header.items():
            if name != "__metadata__":
                yield name, tensor

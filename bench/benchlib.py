"""What the Python benchmarks under bench/ share: paths, running a command, the machine, the
model's sizes from the command line (and its DeltaNet convolution's), the set-up every run
begins with, and the tensors of a checkpoint's safetensors headers."""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
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


def machine():
    """(nproc, CPU model, caches, transparent huge pages setting) of this machine."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    field = lambda name: (re.search(rf"^{name}:\s*(.+)$", out, re.M) or [None, "?"])[1].strip()
    caches = ", ".join(f"{name} {field(name + ' cache')}" for name in ("L1d", "L2", "L3"))
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    try:
        thp = re.search(r"\[(\w+)\]",
                        open("/sys/kernel/mm/transparent_hugepage/enabled").read()).group(1)
    except (OSError, AttributeError):
        thp = "?"
    return nproc, field("Model name"), caches, thp


def conv_size(sizes):
    """The DeltaNet convolution's channels, as the model derives them from its head sizes."""
    return 2 * sizes["KeyHeads"] * sizes["KeyDim"] + sizes["ValueHeads"] * sizes["ValueDim"]


def parse_sizes(items, defaults, keywords=()):
    """NAME=VALUE items over `defaults` (an item in `keywords`, such as `small`, names the
    defaults themselves); Conv follows the DeltaNet sizes unless it is given."""
    sizes = dict(defaults)
    given = set()
    for item in items:
        if item in keywords:
            continue
        name, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            allowed = " or ".join([f"`{k}`" for k in keywords] + ["NAME=VALUE"])
            sys.exit(f"sizes: `{item}` is not {allowed}")
        if name not in defaults:
            sys.exit(f"sizes: `{name}` is none of {', '.join(defaults)}")
        sizes[name] = int(value)
        given.add(name)
    if "Conv" not in given:
        sizes["Conv"] = conv_size(sizes)
    return sizes


def begin_run(args, defaults, steps, keywords=()):
    """What every run begins with: linnet under --build, the sizes of args.sizes (MaxSeq must
    hold the prompt and `steps`, a (name, count) of the tokens after it), the dtypes of --dtype
    and the thread counts of --threads. Returns (linnet, sizes, dtypes, threads)."""
    linnet = os.path.join(args.build, "bin", "linnet")
    if not os.access(linnet, os.X_OK):
        sys.exit(f"no linnet at {linnet}")
    sizes = parse_sizes(args.sizes, defaults, keywords)
    name, count = steps
    if sizes["MaxSeq"] < args.prompt + count:
        sys.exit(f"MaxSeq {sizes['MaxSeq']} < prompt {args.prompt} + {name} {count}")
    dtypes = ["f32", "bf16"] if args.dtype == "both" else [args.dtype]
    threads = [int(t) for t in args.threads.split(",")]
    return linnet, sizes, dtypes, threads


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


def report_entry(out, entry):
    """An entry's line of `linnet build --report`: launches, grid waits, bytes moved, buffers of a
    run-time size left out, waits for the device; None where the report has no such line."""
    line = re.search(rf"^entry `{entry}`: (\d+) launches and (\d+) grid waits; they move "
                     r"([\d.]+) (MiB|KiB|B) \(([\d.]+) us at [\d.]+ TB/s\)"
                     r"(?: and (\d+) buffers of a run-time size)?.*; (\d+) waits for the device"
                     r"(?:; (\d+) of the launches in host loops of a run-time count, counted once)?$",
                     out, re.M)
    if not line:
        return None
    unit = {"MiB": 2 ** 20, "KiB": 2 ** 10, "B": 1}[line.group(4)]
    return {"launches": int(line.group(1)), "grid_waits": int(line.group(2)),
            "bytes": float(line.group(3)) * unit, "unbounded": int(line.group(6) or 0),
            "device_waits": int(line.group(7)), "counted_once": int(line.group(8) or 0)}


def add_full_size_args(parser):
    """--build and --config, as the no-GPU CUDA estimates take them."""
    parser.add_argument("--build", default=os.path.join(TOP, "build"))
    parser.add_argument("--config", default=os.path.join(MODEL, "configs", "qwen3_6_35b_a3b.json"))


def parse_prompt_args(doc):
    """(arguments, config) of a no-GPU prompt estimate whose docstring is `doc`: --build and
    --config, --tokens, --max-seq and --cache (where bench/cuda_issue.py keeps nvdisasm)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    add_full_size_args(parser)
    parser.add_argument("--tokens", type=int, default=8192, help="the prompt's length")
    parser.add_argument("--max-seq", type=int, default=9216,
                        help="MaxSeq: the cache, which bounds attention's keys")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/linnet-bench"),
                        help="where nvdisasm is kept (bench/cuda_issue.py)")
    args = parser.parse_args()
    if args.tokens < 1 or args.max_seq < args.tokens:
        sys.exit("--tokens must be at least 1 and at most --max-seq")
    return args, json.load(open(args.config))


def full_size_report(build, config, batch, max_seq, extra=()):
    """The output of `linnet build --target cuda --report` for `config` bound with Batch and
    MaxSeq (and `extra` options), the binary in a folder removed afterwards."""
    with tempfile.TemporaryDirectory() as work:
        log("linnet build --target cuda --report (full size, minutes)")
        out, _ = run(NICE + [
            os.path.join(build, "bin", "linnet"), "build", MODEL, "--target", "cuda", "--report",
            *extra, "--bind", config, "--bind", f"Batch={batch}", "--bind", f"MaxSeq={max_seq}",
            "-o", os.path.join(work, "model")])
    return out

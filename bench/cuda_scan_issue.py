#!/usr/bin/env python3
"""What a prompt's delta-rule scan costs on paper with `linnet build --target cuda`: the scan is
a chain of dependent tokens (each token's sums need the state the token before left), so
neither bytes nor multiply-adds bound it: the instructions its multiprocessors must issue do.
Compiles one scan of the config's shapes (a row, a run-time number of tokens, the DeltaNet's
value heads, key and value sizes, f32 as the model runs it) through `linnet-opt
--linnet-cuda-pipeline`, assembles its PTX with the toolkit's ptxas for sm_90a, disassembles
the cubin with NVIDIA's nvdisasm (PyPI's `nvidia-cuda-nvdisasm`, fetched once into --cache),
and counts the SASS instructions of the kernel's token loops: each token stores its output
once (STG), and a token's shuffles (3 sums a butterfly stage) give the lanes a column has.
From those, the blocks a multiprocessor runs at once and 4 warp schedulers a multiprocessor
issuing one instruction a cycle each, the cycles a token takes on the busiest multiprocessor:
a floor on the scan's time (latencies not hidden add to it), at the H200's boost clock.

    bench/cuda_scan_issue.py [--build DIR] [--config JSON] [--tokens N] [--cache DIR]

No GPU is needed; the GPU check is tools/scripts/device-check.sh."""
import argparse
import glob
import json
import math
import os
import re
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

CLOCK = 1.98e9  # Hz: the H200's boost clock
MULTIPROCESSORS = 132  # an H200's
SCHEDULERS = 4  # warp schedulers a multiprocessor, one instruction a cycle each
NVDISASM = "nvidia-cuda-nvdisasm==13.5.37"
SHUFFLED_SUMS = 3  # a token's sums the lanes of a column combine (kv, sq, kq)


def nvdisasm(cache):
    """NVIDIA's disassembler from its PyPI wheel, unpacked under `cache` the first time."""
    folder = os.path.join(cache, "nvdisasm")
    found = glob.glob(os.path.join(folder, "**", "bin", "nvdisasm"), recursive=True)
    if found:
        return found[0]
    benchlib.log(f"fetching {NVDISASM} from PyPI into {folder}")
    with tempfile.TemporaryDirectory() as download:
        benchlib.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                      "--disable-pip-version-check", "-d", download, NVDISASM])
        for wheel in glob.glob(os.path.join(download, "*.whl")):
            zipfile.ZipFile(wheel).extractall(folder)
    found = glob.glob(os.path.join(folder, "**", "bin", "nvdisasm"), recursive=True)
    if not found:
        sys.exit(f"no nvdisasm in {NVDISASM}")
    os.chmod(found[0], 0o755)
    return found[0]


def scan_source(heads, keys, columns):
    """One delta rule of a row, a run-time number of tokens and the given sizes, in f32."""
    q = f"tensor<1x?x{heads}x{keys}xf32>"
    v = f"tensor<1x?x{heads}x{columns}xf32>"
    g = f"tensor<1x?x{heads}xf32>"
    state = f"tensor<1x{heads}x{keys}x{columns}xf32>"
    return f"""func.func @scan(%q: {q}, %k: {q}, %v: {v}, %beta: {g}, %g: {g},
                %len: tensor<1xi32>, %init: {state}) -> ({v}, {state}) {{
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : {q}
  %e = tensor.empty(%s) : {v}
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %len outs(%e, %init)
      : ({q}, {q}, {v}, {g}, {g}, tensor<1xi32>, {v}, {state}) -> ({v}, {state})
  return %out, %final : {v}, {state}
}}
"""


def kernel_ptx(module):
    """The PTX text of the first `gpu.binary` in `module` (format=isa)."""
    start = module.index('assembly = "') + len('assembly = "')
    end = start
    while True:
        end = module.index('"', end)
        if module[end - 1] != "\\":
            break
        end += 1
    return re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), module[start:end])


def token_loops(sass, kernel):
    """The innermost loops of `kernel` in nvdisasm's output that store outputs: for each, its
    instruction count and its counts of STG and SHFL."""
    section = sass.index(f".text.{kernel}:")
    body = sass[section:sass.find(".section", section + 1)]
    instructions, labels = [], {}
    for line in body.splitlines():
        label = re.match(r"\s*(\.L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(instructions)
            continue
        instruction = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if instruction:
            instructions.append(instruction.group(1))
    loops = []
    for end, text in enumerate(instructions):
        target = re.search(r"BRA\s+(?:`\()?(\.L_x_\d+)", text)
        if target and labels.get(target.group(1), end + 1) <= end:
            loops.append((labels[target.group(1)], end))
    innermost = [(a, b) for a, b in loops
                 if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops)]
    result = []
    for a, b in innermost:
        body = instructions[a:b + 1]
        opcode = lambda text: re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]
        stores = sum(opcode(t).startswith("STG") for t in body)
        shuffles = sum(opcode(t).startswith("SHFL") for t in body)
        if stores and shuffles:
            result.append({"instructions": len(body), "stores": stores, "shuffles": shuffles,
                           "wide_loads": sum(".128" in opcode(t) and opcode(t).startswith("LDG")
                                             for t in body)})
    return result


def scan_estimate(build, config, tokens, cache):
    """(text lines, milliseconds of every DeltaNet layer's scan of `tokens` tokens)."""
    t = config.get("text_config", config)
    heads, keys, columns = (t["linear_num_value_heads"], t["linear_key_head_dim"],
                            t["linear_value_head_dim"])
    layers = sum(kind == "linear_attention" for kind in t["layer_types"][:t["num_hidden_layers"]])
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "scan.mlir")
        open(source, "w").write(scan_source(heads, keys, columns))
        out, _ = benchlib.run([os.path.join(build, "bin", "linnet-opt"), source,
                               "--linnet-cuda-pipeline=format=isa"])
        ptx = os.path.join(work, "scan.ptx")
        ptx_text = kernel_ptx(out)
        open(ptx, "w").write(ptx_text)
        cubin = os.path.join(work, "scan.cubin")
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        _, info = benchlib.run([os.path.join(cuda, "bin", "ptxas"), "-arch=sm_90a", "-v",
                                ptx, "-o", cubin])
        sass, _ = benchlib.run([nvdisasm(cache), cubin])
    kernel = re.search(r"\.text\.(\w*delta_rule\w*):", sass).group(1)
    registers = int(re.search(r"Used (\d+) registers", info).group(1))
    threads = int(re.search(r"\.maxntid (\d+)", ptx_text).group(1))
    loops = token_loops(sass, kernel)
    if not loops:
        sys.exit(f"no token loop found in {kernel}")
    # The loop that runs: 16-byte loads where it has them (the form aligned rows take).
    loop = max(loops, key=lambda l: l["wide_loads"])
    per_token = loop["instructions"] / loop["stores"]
    stages = loop["shuffles"] // (SHUFFLED_SUMS * loop["stores"])
    lanes = 2 ** stages
    warp_columns = 32 // lanes
    block_columns = min(threads // lanes, columns)
    blocks = heads * math.ceil(columns / block_columns)
    warps_per_block = math.ceil(block_columns / warp_columns)
    resident = max(1, min(65536 // (registers * threads), 2048 // threads))
    busiest = min(math.ceil(blocks / MULTIPROCESSORS), resident) * warps_per_block
    rounds = math.ceil(blocks / (MULTIPROCESSORS * resident))
    cycles = busiest * per_token / SCHEDULERS
    layer = rounds * tokens * cycles / CLOCK
    lines = [
        f"the delta rule's scan, full size ({heads} heads x {columns} columns, keys {keys}; "
        f"kernel {kernel}, {registers} registers, {threads} threads):",
        f"  token loop: {loop['instructions']} SASS instructions for {loop['stores']} tokens "
        f"({per_token:.1f} a token a warp of {warp_columns} columns, {lanes} lanes a column; "
        f"{per_token / warp_columns:.1f} a column)",
        f"  {blocks} blocks of {warps_per_block} warps, {resident} a multiprocessor at most: "
        f"{cycles:.0f} cycles a token on the busiest of {MULTIPROCESSORS}",
        f"  {tokens} tokens: {layer * 1e3:.2f} ms a layer, {layers * layer * 1e3:.1f} ms for "
        f"{layers} layers at {CLOCK / 1e9:.2f} GHz (issue-bound: a floor)",
    ]
    return lines, layers * layer * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    benchlib.add_full_size_args(parser)
    parser.add_argument("--tokens", type=int, default=8192, help="the prompt's length")
    parser.add_argument("--cache", default=os.path.expanduser("~/.cache/linnet-bench"),
                        help="where nvdisasm is kept")
    args = parser.parse_args()
    if args.tokens < 1:
        sys.exit("--tokens must be at least 1")
    lines, _ = scan_estimate(args.build, json.load(open(args.config)), args.tokens, args.cache)
    print("\n".join(lines))


if __name__ == "__main__":
    main()

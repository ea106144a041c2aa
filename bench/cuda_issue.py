#!/usr/bin/env python3
"""What a prompt's two hand-built loop kernels cost on paper with `linnet build --target cuda`:
the DeltaNet's scan and attention's walk over the keys. Each is a loop whose iterations a
block runs one after another (the scan's tokens depend on each other; attention's key steps
share a block's running maximum, sum and accumulators), and each step's scalar work (shuffles,
the softmax, masks, roundings, the recurrence's multiply-adds) outweighs its bytes and its
tensor-core work, so the instructions the multiprocessors must issue bound them, not bytes or
multiply-adds. For each the script compiles one op of the config's full-size shapes through
`linnet-opt --linnet-cuda-pipeline` (the scan: a row, a run-time number of tokens, the
DeltaNet's value heads, key and value sizes, f32 as the model runs it; attention: a row of
bf16 queries of a run-time count, the cache's keys and values, with lengths), assembles its PTX
with the toolkit's ptxas for sm_90a, disassembles the cubin with NVIDIA's nvdisasm (PyPI's
`nvidia-cuda-nvdisasm`, fetched once into --cache) and counts the SASS instructions of the
kernel's loop: the scan's token loop (each token stores its output once, STG; a token's
shuffles, 2 sums a butterfly stage where a window holds the key-query products, 3 where each
column sums them, give the lanes a column has; its shortest path, which skips the rare
rescaling of the state's rows), attention's key-step loop (the innermost loop with mma.sync,
HMMA; 16 keys a step; its shortest path through the 16-byte copies, not their
element-by-element fallbacks for unaligned buffers). From those, the blocks a multiprocessor
runs at once and 4 warp schedulers a multiprocessor issuing one instruction a cycle each, the
cycles a multiprocessor spends: a floor on the kernel's time (latencies not hidden add to it),
at the H200's boost clock, for a prompt of N tokens at position 0 and every layer.

    bench/cuda_issue.py [--build DIR] [--config JSON] [--tokens N] [--max-seq N] [--cache DIR]

No GPU is needed; the GPU check is tools/scripts/device-check.sh."""
import glob
import math
import os
import re
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

CLOCK = 1.98e9  # Hz: the H200's boost clock
MULTIPROCESSORS = 132  # an H200's
SCHEDULERS = 4  # warp schedulers a multiprocessor, one instruction a cycle each
REGISTERS = 65536  # a multiprocessor's
THREADS = 2048  # the most a multiprocessor holds
NVDISASM = "nvidia-cuda-nvdisasm==13.5.37"
QUERY_TILE = 64  # attention: queries a block (TensorCoreAttention.h)
KEY_STEP = 16  # attention: keys a step


def nvdisasm(cache):
    """NVIDIA's disassembler from its PyPI wheel, unpacked under `cache` the first time."""
    folder = os.path.join(cache, "nvdisasm")
    found = glob.glob(os.path.join(folder, "**", "bin", "nvdisasm"), recursive=True)
    if found:
        return found[0]
    benchlib.log(f"fetching {NVDISASM} from PyPI into {folder}")
    # A pip: the project's venv's (tools/scripts/setup-python.sh; Debian's python3 has none
    # without python3-pip), else this python's.
    venv = os.environ.get("LINNET_PYTHON_DIR", os.path.join(benchlib.TOP, ".python"))
    pythons = [os.path.join(venv, "bin", "python3"), sys.executable]
    python = next((p for p in pythons if os.path.isfile(p) and subprocess.run(
        [p, "-m", "pip", "--version"], capture_output=True).returncode == 0), None)
    if python is None:
        sys.exit("no pip to fetch nvdisasm with: run tools/scripts/setup-python.sh")
    with tempfile.TemporaryDirectory() as download:
        benchlib.run([python, "-m", "pip", "download", "-q", "--no-deps",
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


def attention_source(heads, key_heads, depth, cache):
    """One prompt attention of a row of bf16 queries of a run-time count over the cache."""
    q = f"tensor<1x{heads}x?x{depth}xbf16>"
    k = f"tensor<1x{key_heads}x{cache}x{depth}xbf16>"
    return f"""func.func @attend(%q: {q}, %k: {k}, %v: {k}, %offset: tensor<1xi32>,
                  %scale: f32, %lengths: tensor<1xi32>) -> {q} {{
  %c2 = arith.constant 2 : index
  %queries = tensor.dim %q, %c2 : {q}
  %init = tensor.empty(%queries) : {q}
  %o = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init
      : ({q}, {k}, {k}, tensor<1xi32>, f32, tensor<1xi32>, {q}) -> {q}
  return %o : {q}
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


def compile_kernel(build, source, kernel_pattern, cache):
    """(SASS of the kernel matching `kernel_pattern`, its name, registers, threads a block,
    bytes of workgroup memory) of `source` compiled by linnet-opt's CUDA pipeline and ptxas
    for sm_90a."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "op.mlir")
        open(path, "w").write(source)
        out, _ = benchlib.run([os.path.join(build, "bin", "linnet-opt"), path,
                               "--linnet-cuda-pipeline=format=isa"])
        ptx_text = kernel_ptx(out)
        ptx = os.path.join(work, "op.ptx")
        open(ptx, "w").write(ptx_text)
        cubin = os.path.join(work, "op.cubin")
        cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
        _, info = benchlib.run([os.path.join(cuda, "bin", "ptxas"), "-arch=sm_90a", "-v",
                                ptx, "-o", cubin])
        sass, _ = benchlib.run([nvdisasm(cache), cubin])
    kernel = re.search(rf"\.text\.(\w*{kernel_pattern}\w*):", sass).group(1)
    registers = int(re.search(r"Used (\d+) registers", info).group(1))
    threads = int(re.search(r"\.maxntid (\d+)", ptx_text).group(1))
    smem = re.search(r"(\d+) bytes smem", info)
    return sass, kernel, registers, threads, int(smem.group(1)) if smem else 0


def innermost_loops(sass, kernel):
    """The innermost loops of `kernel` in nvdisasm's output (a branch back to a label above
    it closes one), each as (its instructions' opcodes without predicates, the instructions
    on its shortest path from its head to its back branch: every branch inside it taking
    the shorter way, which for these kernels is the common one: a step of attention whose
    keys need no mask and whose rows keep their maximum; but an aligned buffer's vector
    copies, not their element-by-element fallbacks, whatever their lengths; the opcodes of
    the nearest loop around it but its own, or none)."""
    section = sass.index(f".text.{kernel}:")
    body = sass[section:sass.find(".section", section + 1)]
    opcodes, targets, labels, loops = [], [], {}, []
    for line in body.splitlines():
        label = re.match(r"\s*(\.L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(opcodes)
            continue
        instruction = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if not instruction:
            continue
        text = instruction.group(1)
        target = re.search(r"BRA\s+(?:\S+,\s*)?(?:`\()?(\.L_x_\d+)", text)
        conditional = text.startswith("@")
        targets.append((target.group(1) if target else None, conditional))
        if target and target.group(1) in labels:
            loops.append((labels[target.group(1)], len(opcodes)))
        opcodes.append(re.sub(r"^@!?U?P\w+\s+", "", text).split()[0])
    innermost = [(a, b) for a, b in loops
                 if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops)]
    result = []
    # A path's length counts an element-by-element global load (the fallback of a 16-byte
    # copy, LDG.E.U16 and the like) as far longer than any loop, so that the path taken is
    # the vector copies' even where the fallback has fewer instructions.
    def cost(i):
        return 1 << 20 if opcodes[i].startswith("LDG") and ".128" not in opcodes[i] and \
            ".64" not in opcodes[i] else 1

    for a, b in innermost:
        # The nearest loop around it, if any: its instructions but the inner loop's.
        around = [(c, d) for c, d in loops if c <= a and b <= d and (c, d) != (a, b)]
        outer = min(around, key=lambda l: l[1] - l[0], default=None)
        outside = ([op for i, op in enumerate(opcodes[outer[0]:outer[1] + 1], outer[0])
                    if not a <= i <= b] if outer else [])
        # Shortest path: branches inside the loop go forward, so one pass in order.
        distance, length = {a: cost(a)}, {a: 1}
        for i in range(a, b):
            if i not in distance:
                continue
            label, conditional = targets[i]
            following = []
            if label is None or conditional:
                following.append(i + 1)
            if label is not None and a < labels.get(label, -1) <= b:
                following.append(labels[label])
            for j in following:
                if j <= b and distance.get(j, 1 << 62) > distance[i] + cost(j):
                    distance[j], length[j] = distance[i] + cost(j), length[i] + 1
        result.append((opcodes[a:b + 1], length.get(b, b - a + 1), outside))
    return result


def count(loop, prefix):
    return sum(opcode.startswith(prefix) for opcode in loop)


def resident_blocks(registers, threads):
    """Blocks of `threads` threads at `registers` registers a multiprocessor holds at once."""
    return max(1, min(REGISTERS // (registers * threads), THREADS // threads))


def text_config(config):
    t = config.get("text_config", config)
    return t, t["layer_types"][:t["num_hidden_layers"]]


def scan_estimate(build, config, tokens, cache):
    """(text lines, milliseconds of every DeltaNet layer's scan of `tokens` tokens)."""
    t, kinds = text_config(config)
    heads, keys, columns = (t["linear_num_value_heads"], t["linear_key_head_dim"],
                            t["linear_value_head_dim"])
    layers = sum(kind == "linear_attention" for kind in kinds)
    sass, kernel, registers, threads, smem = compile_kernel(
        build, scan_source(heads, keys, columns), "delta_rule", cache)
    loops = [found for found in innermost_loops(sass, kernel)
             if count(found[0], "STG") and count(found[0], "SHFL")]
    if not loops:
        sys.exit(f"no token loop found in {kernel}")
    # The loop that runs: 16-byte loads where it has them (the form aligned rows take); its
    # shortest path, which skips the rare rescaling of the state's rows.
    loop, shortest, outside = max(loops, key=lambda l: count(l[0], "LDG.E.128"))
    tokens_a_loop = count(loop, "STG")
    # A loop of windows around it (with barriers): each window's products k . q, summed
    # into the workgroup memory, a float a token.
    window_tokens = smem // 4 if count(outside, "BAR") and smem else 0
    window_cost = len(outside) / window_tokens if window_tokens else 0
    per_token = shortest / tokens_a_loop + window_cost
    # A token's sums the lanes of a column combine: kv and sq, and k . q where no window
    # holds it.
    shuffled_sums = 2 if window_tokens else 3
    lanes = 2 ** (count(loop, "SHFL") // (shuffled_sums * tokens_a_loop))
    warp_columns = 32 // lanes
    block_columns = min(threads // lanes, columns)
    blocks = heads * math.ceil(columns / block_columns)
    warps_per_block = math.ceil(block_columns / warp_columns)
    resident = resident_blocks(registers, threads)
    busiest = min(math.ceil(blocks / MULTIPROCESSORS), resident) * warps_per_block
    rounds = math.ceil(blocks / (MULTIPROCESSORS * resident))
    cycles = busiest * per_token / SCHEDULERS
    layer = rounds * tokens * cycles / CLOCK
    lines = [
        f"the delta rule's scan, full size ({heads} heads x {columns} columns, keys {keys}; "
        f"kernel {kernel}, {registers} registers, {threads} threads):",
        f"  token loop: {len(loop)} SASS instructions for {tokens_a_loop} tokens, {shortest} "
        f"on its shortest path"
        + (f"; {len(outside)} more a window of {window_tokens} tokens" if window_tokens else "")
        + f" ({per_token:.1f} a token a warp of {warp_columns} columns, {lanes} lanes a "
        f"column; {per_token / warp_columns:.1f} a column)",
        f"  {blocks} blocks of {warps_per_block} warps, {resident} a multiprocessor at most: "
        f"{cycles:.0f} cycles a token on the busiest of {MULTIPROCESSORS}",
        f"  {tokens} tokens: {layer * 1e3:.2f} ms a layer, {layers * layer * 1e3:.1f} ms for "
        f"{layers} layers at {CLOCK / 1e9:.2f} GHz (issue-bound: a floor)",
    ]
    return lines, layers * layer * 1e3


def attention_estimate(build, config, tokens, max_seq, cache):
    """(text lines, milliseconds of every attention layer's prompt attention of `tokens`
    tokens at position 0)."""
    t, kinds = text_config(config)
    heads, key_heads, depth = (t["num_attention_heads"], t["num_key_value_heads"],
                               t["head_dim"])
    layers = sum(kind == "full_attention" for kind in kinds)
    sass, kernel, registers, threads, _ = compile_kernel(
        build, attention_source(heads, key_heads, depth, max_seq), "attention", cache)
    loops = [found for found in innermost_loops(sass, kernel) if count(found[0], "HMMA")]
    if not loops:
        sys.exit(f"no key-step loop found in {kernel}")
    # The loop that runs: where the copies' form is a loop of its own (LLVM unswitches the
    # loop on the buffers' alignment), the one with 16-byte loads.
    loop, shortest, _ = max(loops, key=lambda l: (count(l[0], "HMMA"),
                                                  count(l[0], "LDG.E.128")))
    warps = threads // 32
    # Query tile q sees keys up to 64 (q + 1): that many steps of 16 (causal, from 0).
    tiles = math.ceil(tokens / QUERY_TILE)
    steps = heads * sum(math.ceil(min(tokens, QUERY_TILE * (q + 1)) / KEY_STEP)
                        for q in range(tiles))
    resident = resident_blocks(registers, threads)
    cycles_a_step = warps * shortest / SCHEDULERS
    # Issue-bound: the blocks a multiprocessor holds share its schedulers.
    layer = steps / MULTIPROCESSORS * cycles_a_step / CLOCK
    lines = [
        f"a prompt's attention, full size ({heads} heads over {key_heads}, depth {depth}; "
        f"kernel {kernel}, {registers} registers, {threads} threads):",
        f"  key-step loop: {len(loop)} SASS instructions ({count(loop, 'HMMA')} mma.sync, "
        f"{count(loop, 'LDSM')} ldmatrix, {count(loop, 'LDS') - count(loop, 'LDSM')} other "
        f"shared loads), {shortest} a warp and 16 keys on its shortest path",
        f"  {heads} x {tiles} blocks of {warps} warps, {resident} a multiprocessor at most, "
        f"{steps} block steps: {cycles_a_step:.0f} cycles a step",
        f"  {tokens} tokens: {layer * 1e3:.2f} ms a layer, {layers * layer * 1e3:.1f} ms for "
        f"{layers} layers at {CLOCK / 1e9:.2f} GHz (issue-bound: a floor)",
    ]
    return lines, layers * layer * 1e3


def loop_estimates(args, config):
    """[(text lines, milliseconds)] of the scans and of attention, for benchlib's prompt
    arguments `args`."""
    return [scan_estimate(args.build, config, args.tokens, args.cache),
            attention_estimate(args.build, config, args.tokens, args.max_seq, args.cache)]


def main():
    args, config = benchlib.parse_prompt_args(__doc__)
    for lines, _ in loop_estimates(args, config):
        print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Runs `ptxas -v` on the PTX of every kernel in a module that
`linnet-opt --linnet-cuda-pipeline="format=isa"` wrote and checks what the
decode path may not do: spill registers, use a stack frame (local memory),
or call malloc; and what no kernel may do: declare more than 48 KiB of
shared memory (a block's static limit: ptxas accepts more, the launch
fails), or declare a shared buffer aligned to less than 16 bytes (its
16-byte accesses, st.shared.v4 and ld.shared.v4, would be misaligned). Prints one summary line; exits 1 naming the first kernel that
breaks a rule.

    check_ptx_resources.py MODULE.mlir [--ptxas PATH] [--arch sm_90a]
                           [--table FILE] [--allow-local-memory]
                           [--strict KERNEL-MODULE ...]
                           [--wide-loads KERNEL-MODULE ...]
                           [--tensor-cores KERNEL-MODULE ...]

--table writes `name registers stack shared` per kernel, sorted by name
(what `linnet build --report` must agree with); --allow-stack reports a
--allow-local-memory reports spills and a stack frame in the table instead of
failing (the small configurations' decode attention spills 8 bytes).
--strict names the modules where no kernel may use local memory at all (a
decode step's); with it, a kernel of another module may use up to 16 bytes
(ptxas spills a register of some merged prompt kernels' parts at 40
registers), and a line counts them.
--wide-loads checks the warp reductions (kernels whose lanes combine partial
results with `shfl.sync.bfly`: the GEMVs, norms and other reductions along a
contiguous axis) of the kernel modules named: each must read with 16-byte
loads, from global memory (`ld.global.v4`) or from the shared memory where
a fused producer left its input (`ld.shared.v4`: a norm's sum of squares
over its `extf`; a reduction reads all its inputs in vectors or none, so a
GEMV's weights are read in vectors wherever its input is); prints a second
line that counts them.
--tensor-cores counts the kernels of the modules named that multiply bf16
on the tensor cores (`mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32`:
the prompt's projections); each module must have one, and each such kernel
must read its fragments from tiles it staged in shared memory (16-byte
`st.shared.v4` stores, `ldmatrix` fragment loads); prints a line that
also counts those that copy a tile in with 16-byte global loads
(`ld.global.v4`: an input contiguous along the depth).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
parser.add_argument("module")
parser.add_argument("--ptxas", default=os.path.join(
    os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"))
parser.add_argument("--arch", default="sm_90a")
parser.add_argument("--table")
parser.add_argument("--allow-local-memory", action="store_true")
parser.add_argument("--strict", nargs="+", default=None)
parser.add_argument("--wide-loads", nargs="+", default=[])
parser.add_argument("--tensor-cores", nargs="+", default=[])
args = parser.parse_args()
text = open(args.module).read()


def unescape(literal):
    """An MLIR string literal's bytes: \\XX hex escapes, \\\\ and \\"."""
    out, i = bytearray(), 0
    while i < len(literal):
        c = literal[i]
        if c == "\\":
            nxt = literal[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
                continue
            out.append(int(literal[i + 1:i + 3], 16))
            i += 3
            continue
        out.extend(c.encode())
        i += 1
    return out.decode()


kernels = {}
for match in re.finditer(r'gpu\.binary @([\w.]+)\s.*?assembly = "((?:[^"\\]|\\.)*)"', text):
    kernels[match.group(1)] = unescape(match.group(2))
if not kernels:
    sys.exit("no PTX in the module")
for module, ptx in kernels.items():
    for declared in re.finditer(r"\.shared \.align (\d+) \.\w+ (\w+)", ptx):
        if int(declared.group(1)) < 16:
            sys.exit(f"{module}: shared buffer {declared.group(2)} is aligned to "
                     f"{declared.group(1)} bytes, less than a 16-byte access needs")


def report(item):
    name, ptx = item
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, name + ".ptx")
        with open(source, "w") as f:
            f.write(ptx)
        run = subprocess.run([args.ptxas, "-v", "-arch=" + args.arch, source, "-o",
                              os.path.join(work, name + ".cubin")],
                             capture_output=True, text=True)
    return name, ptx, run


SHARED_LIMIT = 48 * 1024  # static shared memory a block may declare
registers = []
rows = []
tolerated = []
count = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for module, ptx, run in pool.map(report, sorted(kernels.items())):
        if run.returncode != 0:
            sys.exit(f"{module}: ptxas failed: {run.stderr.strip()}")
        if re.search(r"\bmalloc\b", ptx):
            sys.exit(f"{module}: the PTX calls malloc")
        # One report per kernel of the module.
        reports = re.split(r"Compiling entry function '", run.stderr)[1:]
        if not reports:
            sys.exit(f"{module}: no resource report from ptxas -v: {run.stderr.strip()}")
        for each in reports:
            name = each.split("'", 1)[0]
            used = re.search(r"Used (\d+) registers", each)
            frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                              r"(\d+) bytes spill loads", each)
            if not used or not frame:
                sys.exit(f"{name}: no resource report from ptxas -v: {each.strip()}")
            stack, stores, loads = map(int, frame.groups())
            if ((stack or stores or loads) and args.strict is not None
                    and module not in args.strict and stack <= 16 and stores <= 16):
                tolerated.append(name)
            elif (stores or loads) and not args.allow_local_memory:
                sys.exit(f"{name}: spills ({stores} bytes stored, {loads} loaded)")
            elif stack and not args.allow_local_memory:
                sys.exit(f"{name}: a stack frame of {stack} bytes (local memory)")
            registers.append(int(used.group(1)))
            shared = re.search(r"(\d+) bytes smem", each)
            if shared and int(shared.group(1)) > SHARED_LIMIT:
                sys.exit(f"{name}: {shared.group(1)} bytes of shared memory, more than a "
                         f"block's {SHARED_LIMIT} without opting in")
            rows.append((name, int(used.group(1)), stack,
                         int(shared.group(1)) if shared else 0))
            count += 1

warp_reductions = 0
for module in args.wide_loads:
    if module not in kernels:
        sys.exit(f"{module}: no such kernel module")
    for entry in re.split(r"(?=\.(?:visible|weak) \.entry )", kernels[module])[1:]:
        name = re.match(r"\.\w+ \.entry (\w+)", entry).group(1)
        if "shfl.sync.bfly" not in entry:
            continue
        if not re.search(r"ld\.(global(\.nc)?|shared)\.v4\.", entry):
            sys.exit(f"{name}: a warp reduction without 16-byte loads")
        warp_reductions += 1

MMA = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
tensor_core_kernels = 0
wide_tiles = 0
for module in args.tensor_cores:
    if module not in kernels:
        sys.exit(f"{module}: no such kernel module")
    entries = re.split(r"(?=\.(?:visible|weak) \.entry )", kernels[module])[1:]
    using = [entry for entry in entries if MMA in entry]
    if not using:
        sys.exit(f"{module}: no kernel multiplies on the tensor cores ({MMA})")
    for entry in using:
        name = re.match(r"\.\w+ \.entry (\w+)", entry).group(1)
        if "st.shared.v4." not in entry or "ldmatrix.sync.aligned.m8n8.x4.shared.b16" not in entry:
            sys.exit(f"{name}: multiplies on the tensor cores without tiles staged in "
                     f"shared memory")
        if re.search(r"ld\.global(\.nc)?\.v4\.", entry):
            wide_tiles += 1
    tensor_core_kernels += len(using)

if args.table:
    with open(args.table, "w") as f:
        for row in sorted(rows):
            f.write("%s %d %d %d\n" % row)
framed = sum(1 for row in rows if row[2] and row[0] not in tolerated)
local = f"{framed} with local memory" if framed else "no spills, no stack frame"
print(f"{count} kernels in {len(kernels)} modules: at most {max(registers)} registers, "
      f"{local}, no malloc, at most {max(row[3] for row in rows)} bytes of shared memory "
      f"a block")
if args.strict is not None:
    print(f"{len(tolerated)} kernels outside the {len(args.strict)} strict modules use "
          f"at most 16 bytes of local memory")
if args.wide_loads:
    print(f"{warp_reductions} warp reductions in {len(args.wide_loads)} modules, "
          f"each reading with 16-byte loads")
if args.tensor_cores:
    print(f"{tensor_core_kernels} kernels in {len(args.tensor_cores)} modules multiply "
          f"on the tensor cores ({MMA}) from tiles staged in shared memory, "
          f"{wide_tiles} of them copied in with 16-byte loads")

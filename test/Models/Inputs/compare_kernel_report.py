"""Compares `linnet build --target cuda --report` (what linnet read from the
cubins in the binary) with `ptxas -v` on the PTX of the same kernels
(check_ptx_resources.py --table): registers, stack frame and shared memory
of every kernel the report lists must be equal, and every kernel ptxas
compiled must be in the report. Prints one line; exits 1 on the first
difference.

    compare_kernel_report.py REPORT.txt TABLE.txt
"""
import re
import sys

report, table = sys.argv[1], sys.argv[2]
reported = {}
for line in open(report):
    match = re.match(r"(\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+x\d+x\d+\s", line)
    if match:
        name, regs, stack, shared = match.groups()
        reported[name] = (int(regs), int(stack), int(shared))
expected = {}
for line in open(table):
    name, regs, stack, shared = line.split()
    expected[name] = (int(regs), int(stack), int(shared))
if not reported:
    sys.exit("no kernel rows in the report")
for name, figures in sorted(expected.items()):
    if name not in reported:
        sys.exit(f"{name}: compiled by ptxas, missing from the report")
    if reported[name] != figures:
        sys.exit(f"{name}: the report says registers, stack, shared = "
                 f"{reported[name]}, ptxas -v {figures}")
extra = sorted(set(reported) - set(expected))
if extra:
    sys.exit(f"{extra[0]}: in the report, not compiled by ptxas")
print(f"report = ptxas -v: {len(reported)} kernels")

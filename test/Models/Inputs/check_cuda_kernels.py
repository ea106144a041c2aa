"""Checks the CUDA target's output for a whole model: every kernel that the
host side launches (kernels stage) has a cubin (binary stage), and no kernel
allocates memory. Prints what it checked; exits 1 on the first failure."""
import re
import sys

kernels = open(sys.argv[1]).read()
binary = open(sys.argv[2]).read()

entries = sorted(set(re.findall(r"func\.func @(\w+)\(", kernels)) &
                 {"decode", "decode_rows", "forward", "next_token", "prefill", "prefill_slots"})
print("entries: " + ", ".join(entries))

launched = set(re.findall(r"gpu\.launch_func\s+@([\w.]+)::@", kernels))
cubins = set(re.findall(
    r'gpu\.binary @([\w.]+)\s+\[#gpu\.object<#nvvm\.target<[^>]*chip = "sm_90a"[^>]*>, '
    r'properties = \{[^}]*\}, bin = "\\7FELF', binary))
if not launched:
    sys.exit("no kernel is launched")
missing = sorted(launched - cubins)
if missing:
    sys.exit(f"{len(missing)} of {len(launched)} kernels have no cubin, e.g. {missing[0]}")
print(f"every launched kernel has a cubin for sm_90a ({len(launched)})")

def modules(text):
    """(name, body) of every gpu.module, the body up to its closing brace."""
    for match in re.finditer(r"gpu\.module @([\w.]+)[^{]*\{", text):
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        yield match.group(1), text[match.end():end]


checked = 0
for name, body in modules(kernels):
    checked += 1
    if re.search(r"memref\.(alloc|alloca)\b", body):
        sys.exit(f"kernel {name} allocates memory")
if checked != len(launched):
    sys.exit(f"{checked} kernel modules for {len(launched)} launched kernels")
print("no kernel allocates")

unnamed = sorted(k for k in launched if not re.search(r"_[A-Za-z0-9]+_\d+$", k))
if unnamed:
    sys.exit(f"{len(unnamed)} kernels carry no Linnet source line, e.g. {unnamed[0]}")
example = "decode_4_generic_norm_9"
print("every kernel is named after the Linnet source line of its root" +
      (f", e.g. {example}" if example in launched else ""))

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

# One gpu.module (one cubin) per host function, holding its kernels.
launches = set(re.findall(r"gpu\.launch_func\s+@([\w.]+)::@(\w+)", kernels))
launched = {kernel for _, kernel in launches}
cubins = set(re.findall(
    r'gpu\.binary @([\w.]+)\s+\[#gpu\.object<#nvvm\.target<[^>]*chip = "sm_90a"[^>]*>, '
    r'properties = \{[^}]*\}, bin = "\\7FELF', binary))
if not launches:
    sys.exit("no kernel is launched")
missing = sorted({module for module, _ in launches} - cubins)
if missing:
    sys.exit(f"{len(missing)} kernel modules have no cubin, e.g. {missing[0]}")
print(f"every launched kernel has a cubin for sm_90a ({len(launched)} kernels "
      f"in {len(cubins)} modules)")


def modules(text):
    """(name, body) of every gpu.module, the body up to its closing brace."""
    for match in re.finditer(r"gpu\.module @([\w.]+)[^{]*\{", text):
        depth, end = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        yield match.group(1), text[match.end():end]


defined = set()
for name, body in modules(kernels):
    if re.search(r"memref\.(alloc|alloca)\b", body):
        sys.exit(f"a kernel of {name} allocates memory")
    defined |= {(name, k) for k in re.findall(r"gpu\.func @(\w+)\(", body)}
if launches - defined:
    sys.exit(f"launched kernels not in their modules: {sorted(launches - defined)[:3]}")
print("no kernel allocates")

unnamed = sorted(k for k in launched if not re.search(r"_[A-Za-z0-9]+_\d+$", k))
if unnamed:
    sys.exit(f"{len(unnamed)} kernels carry no Linnet source line, e.g. {unnamed[0]}")
# The decode step's last kernel: a chained kernel named after its first
# phase, whose last phase is the LM head.
examples = sorted((k for k in launched if re.fullmatch(r"decode_\d+_\w+_then_\d+", k)),
                  key=lambda k: int(k.split("_")[1]))
print("every kernel is named after the Linnet source line of its root" +
      (f", e.g. {examples[-1]}" if examples else ""))

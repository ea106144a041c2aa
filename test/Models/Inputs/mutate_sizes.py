"""Changes each size in the model's declarations, one at a time, and fails
if `linnet check --bind` accepts any changed model or reports it without a
location.

Mutated: every generic and number in the types of `param` and `state`
members, and in the generic arguments of `sub` members that are `Linear` or
norms (whose sizes the bodies use). Not mutated: the generic arguments passed
through to whole layers (`AttentionLayer<H, 2 * Heads, ...>` describes a
different but consistent model, which only a checkpoint can refute).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

linnet, model, config = sys.argv[1:4]
# Sizes only the checkpoint can check: the expert count of the expert
# weights is never compared with the router's in a body.
EXPECTED_UNDETECTED = {("moe.linnet", "gate_up_proj", "Experts"),
                       ("moe.linnet", "down_proj", "Experts")}
KEYWORDS = {"Tensor", "T", "f32", "i32", "bf16"}
undetected, total = [], 0
work = tempfile.mkdtemp()
for fname in sorted(os.listdir(model)):
    if not fname.endswith(".linnet"):
        continue
    lines = open(os.path.join(model, fname)).read().split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"  (sub|param|state) (\w+): (.*)$", line)
        if not m or (m.group(1) == "sub" and not re.match(
                r"(Linear|RmsNorm|GatedRmsNorm)<", m.group(3))):
            continue
        kind, name, typ = m.groups()
        for tok in re.finditer(r"\b([A-Z][A-Za-z]*|\d+)\b", typ):
            word = tok.group(1)
            if word in KEYWORDS or re.match(r"(Linear|RmsNorm|GatedRmsNorm)$", word):
                continue
            if (fname, name, word) in EXPECTED_UNDETECTED:
                continue
            new = word + " + 1" if not word.isdigit() else str(int(word) + 1)
            changed = typ[:tok.start()] + new + typ[tok.end():]
            copy = os.path.join(work, "qwen3_5_moe")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(model, copy)
            mutated = list(lines)
            mutated[i] = "  %s %s: %s" % (kind, name, changed)
            open(os.path.join(copy, fname), "w").write("\n".join(mutated))
            result = subprocess.run([linnet, "check", copy, "--bind", config],
                                    capture_output=True, text=True)
            total += 1
            located = re.search(r"\.linnet:\d+:\d+: error: ", result.stderr)
            if result.returncode == 0 or not located:
                undetected.append("%s:%d: `%s` -> `%s`" % (fname, i + 1, typ, changed))
shutil.rmtree(work)
for entry in undetected:
    print("not detected:", entry)
print("%d of %d changed sizes rejected with a located error" % (total - len(undetected), total))
sys.exit(1 if undetected or total == 0 else 0)

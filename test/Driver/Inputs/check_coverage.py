"""Fails listing each diagnostic ID that no test file checks for as `[Id]`.

IDs listed as `Id (internal)` (a broken installation or a compiler bug, which no
input can cause) need no test."""
import pathlib
import sys

ids = [line.strip() for line in open(sys.argv[1])
       if line.strip() and not line.strip().endswith("(internal)")]
texts = []
for path in pathlib.Path(sys.argv[2]).rglob("*"):
    # GoogleTest sources count too: errors only a unit can reach (a binding
    # rule the shipped model cannot trigger) are checked there.
    if path.is_file() and (path.suffix in (".linnet", ".test") or
                           (path.suffix == ".cpp" and "unit" in path.parts)):
        texts.append(path.read_text(errors="replace"))
corpus = "\n".join(texts)
missing = [i for i in ids if f"[{i}]" not in corpus]
for i in missing:
    print(f"diagnostic `{i}` is not exercised by any test")
print(f"{len(ids) - len(missing)} of {len(ids)} diagnostics exercised")
sys.exit(1 if missing else 0)

#!/usr/bin/env python3
"""Fails, naming the files, when C++ sources differ from `.clang-format`."""
import pathlib
import subprocess
import sys

top = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
files = sorted(
    p for folder in ("include", "lib", "tools", "test/unit")
    for p in (top / folder).rglob("*")
    if p.suffix in (".h", ".cpp") and p.is_file())
bad = []
for path in files:
    result = subprocess.run(
        ["clang-format-22", "--dry-run", "--Werror", str(path)],
        capture_output=True, text=True)
    if result.returncode != 0:
        bad.append(path.relative_to(top))
for path in bad:
    print(f"{path}: not formatted; run `clang-format-22 -i {path}`")
print(f"{len(files) - len(bad)} of {len(files)} files formatted")
sys.exit(1 if bad else 0)

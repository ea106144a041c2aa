#!/usr/bin/env bash
# Installs what linnet needs on Debian 12 (only the packages that are
# missing), then configures and builds it in build/. Safe to run repeatedly.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"

packages=(
  cmake ninja-build python3 ccache
  clang-22 lld-22 libclang-rt-22-dev clang-format-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libboost-dev libfmt-dev libgtest-dev graphviz python3-numpy
  # OpenMP runtime for CPU code (replaces libomp-dev; docs/MLIR22_NOTES.md §2)
  libomp-22-dev
  # The tokenizer: regexes and Unicode normal forms (lib/Text); chat
  # templates: Unicode classes and JSON with ordered keys (lib/Template)
  libpcre2-dev libutf8proc-dev nlohmann-json3-dev
  # The test references for text (tools/scripts/setup-python.sh)
  python3-venv
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "linnet setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build="${LINNET_BUILD_DIR:-$top/build}"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-22 CXX=clang++-22 cmake -S "$top" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
cmake --build "$build"
"$top/tools/scripts/setup-python.sh"

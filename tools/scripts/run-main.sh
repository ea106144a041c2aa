#!/usr/bin/env bash
# The README's main job: set up, build, and show the qwen3_5_moe model bound
# to the full-size Qwen3.6-35B-A3B configuration.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
"$top/tools/scripts/setup-machine.sh"
build="${LINNET_BUILD_DIR:-$top/build}"
"$build/bin/linnet" inspect "$top/models/qwen3_5_moe" \
  --bind "$top/models/qwen3_5_moe/configs/qwen3_6_35b_a3b.json"

# Sourced by the shell benchmarks that need a mid-size model (~0.9 B values, 3.6 GB in f32):
# sets top, build (the first argument, default build/), linnet, a temporary work folder removed
# on exit, and binds (--bind NAME=VALUE for each of SIZES, which the environment may override;
# every generic but Batch).
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$top/build}"
linnet="$build/bin/linnet"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
SIZES="${SIZES:-Vocab=32768 H=1024 Heads=8 KvHeads=2 HeadDim=128 KeyHeads=4 ValueHeads=8 KeyDim=64 ValueDim=64 Conv=1024 Width=4 Experts=64 TopK=4 ExpertInner=512 SharedInner=512 Groups=2 MaxSeq=512 T=f32}"
binds=()
for size in $SIZES; do binds+=(--bind "$size"); done

#!/usr/bin/env bash
# GFLOP/s of the CPU pipeline (linnet-opt --linnet-cpu-pipeline, run by
# mlir-runner) for matmuls and a GEMV, with 1 and 2 OpenMP threads, next to
# numpy's matmul on the same shapes and thread counts (ratio = ours / numpy).
# Usage: bench/cpu_pipeline/matmul.sh [build-dir]   (default: build)
# numpy is Debian's /usr/bin/python3 one (reference BLAS unless an optimized
# libblas3 alternative is installed): a weak peer, see the ratio column.
set -euo pipefail
top="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$top/build}"
opt="$build/bin/linnet-opt"
llvm=/usr/lib/llvm-22
libs="$llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so,$llvm/lib/libomp.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# module M K N IN_TYPE REPS LAYOUT: C[MxN] (f32) = A[MxK] @ B, timed REPS times.
# LAYOUT nn: B is [K, N] (linalg.matmul); nt: B is [N, K], PyTorch's weight
# layout, read as std.nn.linear's `x @ transpose(w)` fuses (a generic with
# the transposed map: dot products along k, 4x4 register tiles).
module() {
  local m=$1 k=$2 n=$3 t=$4 reps=$5 layout=$6
  local bshape="${k}x${n}"
  [ "$layout" = nt ] && bshape="${n}x${k}"
  cat <<MLIR
func.func @matmul(%a: tensor<${m}x${k}x${t}>, %b: tensor<${bshape}x${t}>) -> tensor<${m}x${n}xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<${m}x${n}xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32>
MLIR
  if [ "$layout" = nt ]; then
    cat <<MLIR
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, l) -> (i, l)>, affine_map<(i, j, l) -> (j, l)>, affine_map<(i, j, l) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<${m}x${k}x${t}>, tensor<${bshape}x${t}>) outs(%c : tensor<${m}x${n}xf32>) {
  ^bb0(%x: ${t}, %y: ${t}, %acc: f32):
$( [ "$t" = f32 ] && echo "    %p = arith.mulf %x, %y : f32" || echo "    %xf = arith.extf %x : ${t} to f32
    %yf = arith.extf %y : ${t} to f32
    %p = arith.mulf %xf, %yf : f32")
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<${m}x${n}xf32>
MLIR
  else
    cat <<MLIR
  %r = linalg.matmul ins(%a, %b : tensor<${m}x${k}x${t}>, tensor<${bshape}x${t}>) outs(%c : tensor<${m}x${n}xf32>) -> tensor<${m}x${n}xf32>
MLIR
  fi
  cat <<MLIR
  return %r : tensor<${m}x${n}xf32>
}
func.func private @rtclock() -> f64
func.func @main() {
  %one = arith.constant 0.5 : ${t}
  %ea = tensor.empty() : tensor<${m}x${k}x${t}>
  %a = linalg.fill ins(%one : ${t}) outs(%ea : tensor<${m}x${k}x${t}>) -> tensor<${m}x${k}x${t}>
  %eb = tensor.empty() : tensor<${bshape}x${t}>
  %b = linalg.fill ins(%one : ${t}) outs(%eb : tensor<${bshape}x${t}>) -> tensor<${bshape}x${t}>
  %warm = call @matmul(%a, %b) : (tensor<${m}x${k}x${t}>, tensor<${bshape}x${t}>) -> tensor<${m}x${n}xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %creps = arith.constant ${reps} : index
  %t0 = call @rtclock() : () -> f64
  scf.for %i = %c0 to %creps step %c1 {
    %r = func.call @matmul(%a, %b) : (tensor<${m}x${k}x${t}>, tensor<${bshape}x${t}>) -> tensor<${m}x${n}xf32>
    %x = tensor.extract %r[%c0, %c0] : tensor<${m}x${n}xf32>
    vector.print %x : f32
  }
  %t1 = call @rtclock() : () -> f64
  %dt = arith.subf %t1, %t0 : f64
  vector.print %dt : f64
  return
}
MLIR
}

ours() {  # M K N TYPE THREADS REPS LAYOUT -> GFLOP/s
  module "$1" "$2" "$3" "$4" "$6" "$7" > "$work/m.mlir"
  "$opt" "$work/m.mlir" --linnet-cpu-pipeline="$pipeline" > "$work/m.ll.mlir"
  local dt
  dt=$(OMP_NUM_THREADS=$5 "$llvm/bin/mlir-runner" "$work/m.ll.mlir" -e main \
       -entry-point-result=void -O3 -shared-libs="$libs" | tail -n 1)
  /usr/bin/python3 -c "print(f'{2*$1*$2*$3*$6/$dt/1e9:.1f}')"
}

numpy_peer() {  # M K N TYPE THREADS LAYOUT -> GFLOP/s (bf16 is computed as f32 by numpy)
  OMP_NUM_THREADS=$5 OPENBLAS_NUM_THREADS=$5 MKL_NUM_THREADS=$5 /usr/bin/python3 - "$@" <<'PY'
import sys, time
import numpy as np
m, k, n = map(int, sys.argv[1:4])
a = np.full((m, k), 0.5, np.float32)
b = np.full((k, n), 0.5, np.float32)
if sys.argv[6] == "nt":
    b = np.full((n, k), 0.5, np.float32).T  # a view: numpy's BLAS reads it transposed
a @ b
reps, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < 1.0:
    a @ b
    reps += 1
print(f"{2 * m * k * n * reps / (time.perf_counter() - t0) / 1e9:.1f}")
PY
}

# As `linnet run` compiles for this machine: bf16 dot products where the CPU
# has AVX512-BF16. BENCH_PIPELINE overrides the pipeline's options.
pipeline="${BENCH_PIPELINE-}"
if [ -z "${BENCH_PIPELINE+set}" ] && grep -qw avx512_bf16 /proc/cpuinfo; then
  pipeline="bf16-dot-products=true"
fi
echo "pipeline options: ${pipeline:-(defaults)}"
printf "%-22s %-6s %-5s %7s %8s %8s %6s\n" shape layout type threads linnet numpy ratio
# Shapes are "M K N repetitions"; each list can be narrowed from the
# environment for a quick look, e.g. BENCH_TYPES=f32 BENCH_THREADS=1.
IFS=, read -ra shapes <<< "${BENCH_SHAPES:-512 2048 2048 4,1 2048 8192 50}"
for shape in "${shapes[@]}"; do
  set -- $shape
  for layout in ${BENCH_LAYOUTS:-nn nt}; do
    for type in ${BENCH_TYPES:-f32 bf16}; do
      for threads in ${BENCH_THREADS:-1 2}; do
        g=$(ours "$1" "$2" "$3" "$type" "$threads" "$4" "$layout")
        p=$(numpy_peer "$1" "$2" "$3" "$type" "$threads" "$layout")
        r=$(/usr/bin/python3 -c "print(f'{$g/$p:.2f}')")
        printf "%-22s %-6s %-5s %7s %8s %8s %6s\n" "${1}x${2}x${3}" "$layout" "$type" "$threads" "$g" "$p" "$r"
      done
    done
  done
done

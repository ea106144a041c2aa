// A matmul is tiled over threads (scf.forall, then an OpenMP work-sharing
// loop), blocked over K, and its 8x16 register tile becomes vector.contract,
// then broadcasts and FMAs with the accumulator held across the K loop.
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=LINALG
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=loops threads=2" | FileCheck %s --check-prefix=LOOPS
// RUN: linnet-opt %s --linnet-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// LINALG-LABEL: func.func @matmul
// LINALG: scf.forall ({{.*}}) = (0, 0) to (128, 512) step (64, 256)
// LINALG: vector.transfer_write {{.*}} : vector<1x32xf32>
// LINALG: scf.for {{.*}} step %c256
// LINALG: vector.contract {{.*}} : vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>

// LOOPS-LABEL: func.func @matmul
// LOOPS: omp.parallel num_threads
// LOOPS: omp.wsloop
// LOOPS: omp.loop_nest
// LOOPS: scf.for {{.*}} iter_args
// LOOPS: vector.fma {{.*}} : vector<16xf32>
// LOOPS-NOT: vector.contract

// LLVM-LABEL: llvm.func @matmul
// LLVM: llvm.intr.fmuladd
// LLVM-LABEL: llvm.func @_mlir_ciface_matmul
func.func @matmul(%a: tensor<128x384xf32>, %b: tensor<384x512xf32>) -> tensor<128x512xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x512xf32>) -> tensor<128x512xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x384xf32>, tensor<384x512xf32>) outs(%c : tensor<128x512xf32>) -> tensor<128x512xf32>
  return %r : tensor<128x512xf32>
}

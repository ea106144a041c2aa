// Runs the lowering of linnet.attention on the CPU, with plain loops and with
// OpenMP parallel loops, and compares it with the numpy reference in
// Inputs/attention.py.
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/attention.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm-openmp | %run-main-openmp \
// RUN:   | %refpython %S/Inputs/attention.py | FileCheck %s
// The online softmax over several key blocks (2 keys each: the 5 keys in
// three blocks, the last one short; 1 key each), where every block rescales
// what the earlier ones summed, and a row's first blocks may have no allowed
// key at all:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="attention-key-block=2" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/attention.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="attention-key-block=1" \
// RUN:   | mlir-opt %lower-to-llvm-openmp | %run-main-openmp \
// RUN:   | %refpython %S/Inputs/attention.py | FileCheck %s
// The prompt's blocks set apart (attention-prompt-key-block; its 3 queries
// make it a prompt), as the CUDA target sets them:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg="attention-key-block=256 attention-prompt-key-block=2" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/attention.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | not linnet-opt --linnet-lower-to-linalg="attention-key-block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: attention-key-block must be at least 1
// Tiled as an op by the CPU pipeline (the configurations pinned on the ops:
// a row and two query heads, the group of one key head, per tile; two rows,
// one query head and two queries, a tile of queries from 0 or 2 on, whose
// positions take in its start), each tile lowered in its dispatch region:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-cpu-pipeline \
// RUN:   | %run-main-openmp | %refpython %S/Inputs/attention.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-cpu-pipeline="stop-after=linalg" \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED: scf.forall ({{.*}}) = (0, 0) to (2, 4) step (1, 2)
// TILED: scf.forall ({{.*}}) = (0, 0) to (4, 3) step (1, 2)
// TILED-NOT: linnet.attention
//
// Tolerance: 1e-5 absolute plus 1e-4 relative. Inputs are rebuilt from sin()
// in f32 here and in f64 by numpy (about 1e-7 apart); printMemrefF32 prints
// six significant digits, so 1e-4 relative covers the printing, and f32
// sums over 7 products and 5 keys stay far inside it.

// Two rows, Hq = 4 over Hk = 2 (GQA), S = 3 queries, L = 5 keys, D = 7.
// Row 0: offset 2, lengths 4 (query 2 at position 4 still sees only keys
// 0..3). Row 1: offset -1, so query 0 has no allowed key and gives zeros;
// lengths 2 caps the others.
// CHECK: attention: PASS
// CHECK: attention without lengths: PASS
func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 0.1 : f32
  %s2 = arith.constant 0.2 : f32
  %s3 = arith.constant 0.3 : f32
  %q0 = call @sin_4d(%c2, %c4, %c3, %c7, %s1, %one, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %k0 = call @sin_4d(%c2, %c2, %c5, %c7, %s2, %one, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %v0 = call @sin_4d(%c2, %c2, %c5, %c6, %s3, %one, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %q = tensor.cast %q0 : tensor<?x?x?x?xf32> to tensor<2x4x3x7xf32>
  %k = tensor.cast %k0 : tensor<?x?x?x?xf32> to tensor<2x2x5x7xf32>
  %v = tensor.cast %v0 : tensor<?x?x?x?xf32> to tensor<2x2x5x6xf32>
  %offset = arith.constant dense<[2, -1]> : tensor<2xi32>
  %lengths = arith.constant dense<[4, 2]> : tensor<2xi32>
  %scale = arith.constant 0.35 : f32
  %init_out = tensor.empty() : tensor<2x4x3x6xf32>
  %out = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init_out
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [1, 2, 0], reduction = [0, 0, 0], vector = [1, 1, 1]>}
      : (tensor<2x4x3x7xf32>, tensor<2x2x5x7xf32>, tensor<2x2x5x6xf32>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x3x6xf32>) -> tensor<2x4x3x6xf32>
  %printed = tensor.cast %out : tensor<2x4x3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%printed) : (tensor<*xf32>) -> ()

  %offset2 = arith.constant dense<[1, 0]> : tensor<2xi32>
  %init_out2 = tensor.empty() : tensor<2x4x3x6xf32>
  %out2 = linnet.attention %q, %k, %v, %offset2, %scale into %init_out2
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [2, 1, 2], reduction = [0, 0, 0], vector = [1, 1, 1]>}
      : (tensor<2x4x3x7xf32>, tensor<2x2x5x7xf32>, tensor<2x2x5x6xf32>,
         tensor<2xi32>, f32, tensor<2x4x3x6xf32>) -> tensor<2x4x3x6xf32>
  %printed2 = tensor.cast %out2 : tensor<2x4x3x6xf32> to tensor<*xf32>
  call @printMemrefF32(%printed2) : (tensor<*xf32>) -> ()
  return
}

// Runs the lowering of linnet.causal_conv on the CPU and compares it with the
// numpy reference in Inputs/causal_conv.py.
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/causal_conv.py | FileCheck %s
// Tiled as an op by the CPU pipeline (the configuration pinned on the op: a
// row and 2 of the 3 channels per tile, the last tile 1), each tile lowered
// in its dispatch region:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-cpu-pipeline \
// RUN:   | %run-main-openmp | %refpython %S/Inputs/causal_conv.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-cpu-pipeline="stop-after=linalg" \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED: scf.forall ({{.*}}) = (0, 0) to (4, 3) step (1, 2)
// TILED-NOT: linnet.causal_conv
//
// Tolerance: 1e-5 absolute plus 1e-4 relative: inputs differ by about 1e-7
// between f32 here and f64 in numpy, sums have only W = 4 terms, and
// printMemrefF32 prints six significant digits.

// B = 4 rows, S = 5, C = 3 channels, W = 4 taps (history of 3 rows).
// Lengths 7 (clamped to S = 5), 2, 0 (history kept) and -3 (clamped to 0).
// CHECK: causal_conv output: PASS
// CHECK: causal_conv new history: PASS
func.func @main() {
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 0.1 : f32
  %s2 = arith.constant 0.2 : f32
  %s3 = arith.constant 0.3 : f32
  %x0 = call @sin_3d(%c4, %c5, %c3, %s1, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %taps0 = call @sin_2d(%c3, %c4, %s2, %one, %zero)
      : (index, index, f32, f32, f32) -> tensor<?x?xf32>
  %history0 = call @sin_3d(%c4, %c3, %c3, %s3, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %x = tensor.cast %x0 : tensor<?x?x?xf32> to tensor<4x5x3xf32>
  %taps = tensor.cast %taps0 : tensor<?x?xf32> to tensor<3x4xf32>
  %history = tensor.cast %history0 : tensor<?x?x?xf32> to tensor<4x3x3xf32>
  %lengths = arith.constant dense<[7, 2, 0, -3]> : tensor<4xi32>
  %y, %new_history = linnet.causal_conv %x, %taps, %history, %lengths
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [1, 2], reduction = [0, 0], vector = [1, 1]>}
      : (tensor<4x5x3xf32>, tensor<3x4xf32>, tensor<4x3x3xf32>, tensor<4xi32>)
      -> (tensor<4x5x3xf32>, tensor<4x3x3xf32>)
  %printed_y = tensor.cast %y : tensor<4x5x3xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_y) : (tensor<*xf32>) -> ()
  %printed_history = tensor.cast %new_history
      : tensor<4x3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_history) : (tensor<*xf32>) -> ()
  return
}

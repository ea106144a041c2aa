// Runs the lowering of linnet.delta_rule on the CPU, with plain loops and with
// OpenMP parallel loops, and compares it with the numpy reference in
// Inputs/delta_rule.py.
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/delta_rule.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm-openmp | %run-main-openmp \
// RUN:   | %refpython %S/Inputs/delta_rule.py | FileCheck %s
// Tiled as an op by the CPU pipeline (the configuration pinned on the op: a
// row, a head and 2 of the 4 value columns per tile), each tile lowered in
// its dispatch region:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-cpu-pipeline \
// RUN:   | %run-main-openmp | %refpython %S/Inputs/delta_rule.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-cpu-pipeline="stop-after=linalg" \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED: scf.forall ({{.*}}) = (0, 0, 0) to (3, 2, 4) step (1, 1, 2)
// TILED-NOT: linnet.delta_rule
//
// Tolerance: 1e-5 absolute plus 1e-4 relative: inputs differ by about 1e-7
// between f32 here and f64 in numpy, five recurrent steps over K = 3 keep
// the f32 rounding near 1e-6, and printMemrefF32 prints six digits.

// B = 3 rows, S = 5 steps, N = 2 heads, K = 3, V = 4; a non-zero initial
// state. Row 0 uses all steps, row 1 stops after 3 (its last outputs are 0
// and its state is frozen), row 2 has length 0 (final state = initial).
// CHECK: delta_rule output: PASS
// CHECK: delta_rule final state: PASS
func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %s1 = arith.constant 0.1 : f32
  %s2 = arith.constant 0.2 : f32
  %s3 = arith.constant 0.3 : f32
  %s4 = arith.constant 0.4 : f32
  %s5 = arith.constant 0.5 : f32
  %s6 = arith.constant 0.6 : f32
  %gate_scale = arith.constant 0.3 : f32
  %gate_bias = arith.constant -0.4 : f32
  %q0 = call @sin_4d(%c3, %c5, %c2, %c3, %s1, %half, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %k0 = call @sin_4d(%c3, %c5, %c2, %c3, %s2, %half, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %v0 = call @sin_4d(%c3, %c5, %c2, %c4, %s3, %one, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %beta0 = call @sin_3d(%c3, %c5, %c2, %s4, %s4, %half)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %g0 = call @sin_3d(%c3, %c5, %c2, %s5, %gate_scale, %gate_bias)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %init0 = call @sin_4d(%c3, %c2, %c3, %c4, %s6, %half, %zero)
      : (index, index, index, index, f32, f32, f32) -> tensor<?x?x?x?xf32>
  %q = tensor.cast %q0 : tensor<?x?x?x?xf32> to tensor<3x5x2x3xf32>
  %k = tensor.cast %k0 : tensor<?x?x?x?xf32> to tensor<3x5x2x3xf32>
  %v = tensor.cast %v0 : tensor<?x?x?x?xf32> to tensor<3x5x2x4xf32>
  %beta = tensor.cast %beta0 : tensor<?x?x?xf32> to tensor<3x5x2xf32>
  %g = tensor.cast %g0 : tensor<?x?x?xf32> to tensor<3x5x2xf32>
  %init = tensor.cast %init0 : tensor<?x?x?x?xf32> to tensor<3x2x3x4xf32>
  %lengths = arith.constant dense<[5, 3, 0]> : tensor<3xi32>
  %empty = tensor.empty() : tensor<3x5x2x4xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init) {linnet.lowering_config = #linnet.lowering_config<
          thread = [1, 1, 2], reduction = [0, 0, 0], vector = [1, 1, 1]>}
      : (tensor<3x5x2x3xf32>, tensor<3x5x2x3xf32>, tensor<3x5x2x4xf32>,
         tensor<3x5x2xf32>, tensor<3x5x2xf32>, tensor<3xi32>,
         tensor<3x5x2x4xf32>, tensor<3x2x3x4xf32>)
      -> (tensor<3x5x2x4xf32>, tensor<3x2x3x4xf32>)
  %printed_out = tensor.cast %out : tensor<3x5x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_out) : (tensor<*xf32>) -> ()
  %printed_final = tensor.cast %final : tensor<3x2x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_final) : (tensor<*xf32>) -> ()
  return
}

// Runs the lowerings of linnet.rank and linnet.topk on the CPU and compares
// them with the numpy reference in Inputs/ranking.py.
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-lower-to-linalg \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/ranking.py | FileCheck %s
// Tiled as ops by the CPU pipeline (pinned configurations: 2 rows per tile,
// the last one partial), each tile lowered in its dispatch region:
// RUN: cat %s %S/Inputs/generators.mlir | linnet-opt --linnet-cpu-pipeline \
// RUN:   | %run-main-openmp | %refpython %S/Inputs/ranking.py | FileCheck %s
// RUN: cat %s %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-cpu-pipeline="stop-after=linalg" \
// RUN:   | FileCheck %s --check-prefix=TILED
// TILED-COUNT-2: scf.forall ({{.*}}) = (0) to (3) step (2)
//
// Tolerance: none; ranks and indices are integers and the values are copied
// (they print exactly).

// Ties resolve to the lower index (row 1 is constant); NaN counts as the
// largest value and -0.0 equals 0.0 (row 2).
// CHECK: rank: PASS
// CHECK: topk values: PASS
// CHECK: topk indices: PASS
func.func @main() {
  %x = arith.constant dense<[[0.5, -1.0, 2.0, 0.5, 3.0, -2.0, 2.0],
                             [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
                             [-0.25, 0x7FC00000, 4.0, -0.0, 0.0, 0x7FC00000, -7.5]]>
      : tensor<3x7xf32>
  %ranks = linnet.rank %x
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [2], reduction = [0], vector = [1]>}
      : tensor<3x7xf32> -> tensor<3x7xi32>
  %printed_ranks = tensor.cast %ranks : tensor<3x7xi32> to tensor<*xi32>
  call @printMemrefI32(%printed_ranks) : (tensor<*xi32>) -> ()

  %values, %indices = linnet.topk %x
      {k = 3 : i64, linnet.lowering_config = #linnet.lowering_config<
          thread = [2], reduction = [0], vector = [1]>}
      : tensor<3x7xf32> -> tensor<3x3xf32>, tensor<3x3xi32>
  %printed_values = tensor.cast %values : tensor<3x3xf32> to tensor<*xf32>
  call @printMemrefF32(%printed_values) : (tensor<*xf32>) -> ()
  %printed_indices = tensor.cast %indices : tensor<3x3xi32> to tensor<*xi32>
  call @printMemrefI32(%printed_indices) : (tensor<*xi32>) -> ()
  return
}

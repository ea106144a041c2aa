// linnet.causal_conv becomes a generic picking each row of history ‖ input
// (an scf.if reads the row's own tensor: history below its 3 rows, input
// past them), one generic with the convolution map (b, s + w, c) reducing
// over the taps, a rounding generic, and a gather generic for the new
// history that picks from history and input alike.
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1 + d3, d2)>
// CHECK-DAG: #[[TAPS:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0)>

// CHECK-LABEL: func.func @causal_conv
// CHECK-SAME: (%[[X:.*]]: tensor<2x?x3xbf16>, %[[TAPS_ARG:.*]]: tensor<3x4xbf16>, %[[HIST:.*]]: tensor<2x3x3xbf16>, %[[LEN:.*]]: tensor<2xi32>)
func.func @causal_conv(%x: tensor<2x?x3xbf16>, %taps: tensor<3x4xbf16>,
                       %history: tensor<2x3x3xbf16>, %lengths: tensor<2xi32>)
    -> (tensor<2x?x3xbf16>, tensor<2x3x3xbf16>) {
  // CHECK-NOT: linnet.
  // CHECK: %[[XX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x?x3xbf16>)
  // CHECK: %[[ROWXX:.*]] = linalg.index 1
  // CHECK: arith.cmpi ult, %[[ROWXX]], %c3
  // CHECK: scf.if
  // CHECK: tensor.extract %[[HIST]]
  // CHECK: } else {
  // CHECK: arith.subi %[[ROWXX]], %c3
  // CHECK: tensor.extract %[[X]]
  // CHECK-NOT: tensor.concat
  // CHECK: %[[STEPS:.*]] = tensor.dim %[[X]], %c1
  // CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[WINDOW]], #[[TAPS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XX]], %[[TAPS_ARG]] : {{.*}}) outs(%{{.*}} : tensor<2x?x3xf32>)
  // CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<2x?x3xf32>) outs(%{{.*}} : tensor<2x?x3xbf16>)
  // CHECK: arith.truncf
  // CHECK: %[[NEW:.*]] = linalg.generic {indexing_maps = [#[[ROW]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LEN]] : tensor<2xi32>) outs(%{{.*}} : tensor<2x3x3xbf16>)
  // CHECK: arith.maxsi
  // CHECK: arith.minsi %{{.*}}, %[[STEPS]]
  // CHECK: scf.if
  // CHECK: tensor.extract %[[HIST]]
  // CHECK: tensor.extract %[[X]]
  // CHECK: return %[[Y]], %[[NEW]]
  %y, %h = linnet.causal_conv %x, %taps, %history, %lengths
      : (tensor<2x?x3xbf16>, tensor<3x4xbf16>, tensor<2x3x3xbf16>,
         tensor<2xi32>) -> (tensor<2x?x3xbf16>, tensor<2x3x3xbf16>)
  return %y, %h : tensor<2x?x3xbf16>, tensor<2x3x3xbf16>
}

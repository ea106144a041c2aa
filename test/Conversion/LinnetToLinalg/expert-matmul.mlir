// linnet.expert_matmul becomes one generic, parallel over (r, j, o) and
// reducing over i, that gathers the weights with a clamped tensor.extract
// and zeroes the terms of out-of-range expert ids, then a rounding generic.
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[SHARED:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-DAG: #[[PER_SLOT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[IDS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @expert_matmul
// CHECK-SAME: (%[[X:.*]]: tensor<3x16xf16>, %[[XK:.*]]: tensor<3x2x16xf16>, %[[W:.*]]: tensor<?x32x16xf16>, %[[IDS_ARG:.*]]: tensor<3x2xi32>)
func.func @expert_matmul(%x: tensor<3x16xf16>, %xk: tensor<3x2x16xf16>,
                         %w: tensor<?x32x16xf16>, %ids: tensor<3x2xi32>)
    -> (tensor<3x2x32xf16>, tensor<3x2x32xf16>) {
  // CHECK-NOT: linnet.
  // CHECK: %[[NUM:.*]] = tensor.dim %[[W]], %c0
  // CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[SHARED]], #[[IDS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[X]], %[[IDS_ARG]] : {{.*}}) outs(%{{.*}} : tensor<3x2x32xf32>)
  // CHECK: ^bb0(%{{.*}}: f16, %[[ID:.*]]: i32, %{{.*}}: f32):
  // CHECK: %[[E:.*]] = arith.index_cast %[[ID]] : i32 to index
  // CHECK: arith.cmpi sge, %[[E]], %c0
  // CHECK: arith.cmpi slt, %[[E]], %[[NUM]]
  // CHECK: %[[VALID:.*]] = arith.andi
  // CHECK: %[[SAFE:.*]] = arith.select %[[VALID]], %[[E]], %c0
  // CHECK: %[[O:.*]] = linalg.index 2
  // CHECK: %[[I:.*]] = linalg.index 3
  // CHECK: tensor.extract %[[W]][%[[SAFE]], %[[O]], %[[I]]] : tensor<?x32x16xf16>
  // CHECK: arith.select %[[VALID]]
  // CHECK: linalg.generic {{.*}} ins(%[[SUMS]] : tensor<3x2x32xf32>) outs(%{{.*}} : tensor<3x2x32xf16>)
  // CHECK: arith.truncf %{{.*}} : f32 to f16
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<3x16xf16>, tensor<?x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  // CHECK: linalg.generic {indexing_maps = [#[[PER_SLOT]], #[[IDS]], #[[OUT]]]
  // CHECK-SAME: ins(%[[XK]], %[[IDS_ARG]]
  %1 = linnet.expert_matmul %xk, %w, %ids
      : (tensor<3x2x16xf16>, tensor<?x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  return %0, %1 : tensor<3x2x32xf16>, tensor<3x2x32xf16>
}

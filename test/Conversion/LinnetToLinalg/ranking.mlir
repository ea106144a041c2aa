// linnet.rank becomes an O(N^2) comparison generic over (..., i, j);
// linnet.topk adds a generic that inverts the first k ranks and a gather
// generic for the values.
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[SELF:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OTHER:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>

// CHECK-LABEL: func.func @rank
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>)
func.func @rank(%x: tensor<4x?xf32>) -> tensor<4x?xi32> {
  // CHECK-NOT: linnet.
  // CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<4x?xi32>
  // CHECK: %[[RANKS:.*]] = linalg.generic {indexing_maps = [#[[SELF]], #[[OTHER]], #[[SELF]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[X]] : {{.*}}) outs(%[[ZEROS]] : tensor<4x?xi32>)
  // CHECK: ^bb0(%[[SELF_V:.*]]: f32, %[[OTHER_V:.*]]: f32, %{{.*}}: i32):
  // CHECK: %[[I:.*]] = linalg.index 1
  // CHECK: %[[J:.*]] = linalg.index 2
  // CHECK: arith.cmpf ogt, %[[OTHER_V]], %[[SELF_V]]
  // CHECK: arith.cmpi ult, %[[J]], %[[I]]
  // CHECK: arith.extui %{{.*}} : i1 to i32
  // CHECK: return %[[RANKS]]
  %0 = linnet.rank %x : tensor<4x?xf32> -> tensor<4x?xi32>
  return %0 : tensor<4x?xi32>
}

// CHECK-LABEL: func.func @topk
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>)
func.func @topk(%x: tensor<4x?xf32>) -> (tensor<4x8xf32>, tensor<4x8xi32>) {
  // CHECK-NOT: linnet.
  // CHECK: %[[RANKS:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[X]]
  // CHECK: %[[INDICES:.*]] = linalg.generic {indexing_maps = [#[[OTHER]], #[[SELF]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[RANKS]] : tensor<4x?xi32>) outs(%{{.*}} : tensor<4x8xi32>)
  // CHECK: arith.cmpi eq
  // CHECK: %[[VALUES:.*]] = linalg.generic {{.*}} ins(%[[INDICES]] : tensor<4x8xi32>) outs(%{{.*}} : tensor<4x8xf32>)
  // CHECK: tensor.extract %[[X]]
  // CHECK: return %[[VALUES]], %[[INDICES]]
  %values, %indices = linnet.topk %x {k = 8 : i64}
      : tensor<4x?xf32> -> tensor<4x8xf32>, tensor<4x8xi32>
  return %values, %indices : tensor<4x8xf32>, tensor<4x8xi32>
}

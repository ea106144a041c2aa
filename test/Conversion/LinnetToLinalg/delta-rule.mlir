// linnet.delta_rule becomes one scf.for over the sequence carrying the state
// and the output; each step reads the state twice (state^T key, state^T
// query) and writes it once, into the carried one (decay * state + key *
// delta); the output comes from what the first reads gave, without reading
// the new state again. Every generic is parallel over rows, heads and state
// dims.
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[STATE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[HEAD4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[STATE_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-DAG: #[[KEY_R:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @delta_rule
// CHECK-SAME: (%[[Q:.*]]: tensor<2x?x3x4xf32>, %[[K:.*]]: tensor<2x?x3x4xf32>, %[[V:.*]]: tensor<2x?x3x6xf32>, %[[BETA:.*]]: tensor<2x?x3xf32>, %[[G:.*]]: tensor<2x?x3xf32>, %[[INIT:.*]]: tensor<2x3x4x6xf32>, %[[LEN:.*]]: tensor<2xi32>)
func.func @delta_rule(%q: tensor<2x?x3x4xf32>, %k: tensor<2x?x3x4xf32>,
                      %v: tensor<2x?x3x6xf32>, %beta: tensor<2x?x3xf32>,
                      %g: tensor<2x?x3xf32>, %init: tensor<2x3x4x6xf32>,
                      %lengths: tensor<2xi32>)
    -> (tensor<2x?x3x6xf32>, tensor<2x3x4x6xf32>) {
  // CHECK-NOT: linnet.
  // CHECK: %[[EMPTY:.*]] = tensor.empty
  // CHECK: %[[ZEROS:.*]] = linalg.fill {{.*}} outs(%[[EMPTY]] : tensor<2x?x3x6xf32>)
  // CHECK: %[[SCAN:.*]]:2 = scf.for %[[T:.*]] = %c0 to %{{.*}} step %{{.*}} iter_args(%[[ST:.*]] = %[[INIT]], %[[O:.*]] = %[[ZEROS]]) -> (tensor<2x3x4x6xf32>, tensor<2x?x3x6xf32>)
  // CHECK-DAG: %[[QT:.*]] = tensor.extract_slice %[[Q]][0, %[[T]], 0, 0] [2, 1, 3, 4] [1, 1, 1, 1] : tensor<2x?x3x4xf32> to tensor<2x3x4xf32>
  // CHECK-DAG: %[[KT:.*]] = tensor.extract_slice %[[K]][0, %[[T]], 0, 0]
  // CHECK-DAG: %[[GT:.*]] = tensor.extract_slice %[[G]][0, %[[T]], 0] [2, 1, 3] [1, 1, 1] : tensor<2x?x3xf32> to tensor<2x3xf32>
  // CHECK: %[[KV:.*]] = linalg.generic {indexing_maps = [#[[STATE_T]], #[[KEY_R]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[ST]], %[[KT]]
  // CHECK: %[[SQ:.*]] = linalg.generic {indexing_maps = [#[[STATE_T]], #[[KEY_R]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[ST]], %[[QT]]
  // CHECK: %[[KQ:.*]] = linalg.generic {{.*}} ins(%[[KT]], %[[QT]] :
  // CHECK: %[[DECAY:.*]] = linalg.generic {{.*}} ins(%[[GT]], %[[LEN]] :
  // CHECK: math.exp
  // CHECK: %[[DELTA:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[KV]], %[[DECAY]], %{{.*}}, %[[LEN]] :
  // CHECK: %[[UPDATED:.*]] = linalg.generic {indexing_maps = [#[[HEAD4]], #[[OUT]], #[[KEY_R]], #[[STATE]]], {{.*}} ins(%[[DECAY]], %[[KT]], %[[DELTA]] : {{.*}}) outs(%[[ST]] : tensor<2x3x4x6xf32>)
  // CHECK: %[[OUT_T:.*]] = linalg.generic {{.*}} ins(%[[SQ]], %[[DELTA]], %[[DECAY]], %[[KQ]], %[[LEN]] :
  // CHECK: %[[NEXT:.*]] = tensor.insert_slice %[[OUT_T]] into %[[O]][0, %[[T]], 0, 0] [2, 1, 3, 6] [1, 1, 1, 1]
  // CHECK: scf.yield %[[UPDATED]], %[[NEXT]]
  // CHECK: return %[[SCAN]]#1, %[[SCAN]]#0
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<2x?x3x4xf32>
  %empty = tensor.empty(%s) : tensor<2x?x3x6xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %lengths
      outs(%empty, %init)
      : (tensor<2x?x3x4xf32>, tensor<2x?x3x4xf32>, tensor<2x?x3x6xf32>,
         tensor<2x?x3xf32>, tensor<2x?x3xf32>, tensor<2xi32>,
         tensor<2x?x3x6xf32>, tensor<2x3x4x6xf32>)
      -> (tensor<2x?x3x6xf32>, tensor<2x3x4x6xf32>)
  return %out, %final : tensor<2x?x3x6xf32>, tensor<2x3x4x6xf32>
}

// States stay in the buffers their callers pass (linnet-codegen-drop-in-place-results
// in the CPU pipeline): a private function that writes a row of a cache in
// place returns nothing for it, so no copy of the cache is made per call, and
// an entry's results marked `linnet.state` are dropped, the new state written
// into the argument of the same state: in place, or copied where it is some
// other buffer.
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=loops" | FileCheck %s

// CHECK-LABEL: func.func private @append
// CHECK-SAME: (%[[CACHE:[^:]+]]: memref<4x8xf32>
// CHECK-SAME: ) {
// CHECK-NOT: memref<4x8xf32> to memref<4x8xf32>
// CHECK-NOT: memref.alloc() : memref<4x8xf32>
// CHECK: return
func.func private @append(%cache: tensor<4x8xf32>, %row: tensor<1x8xf32>, %i: index) -> tensor<4x8xf32> {
  %r = tensor.insert_slice %row into %cache[%i, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[CACHE:[^:]+]]: memref<4x8xf32> {linnet.state = "cache"}, %[[SUM:[^:]+]]: memref<8xf32> {linnet.state = "sum"}, %[[LAST:[^:]+]]: memref<8xf32> {linnet.state = "last"}
// CHECK-SAME: -> memref<8xf32>
// CHECK-NOT: memref.alloc() : memref<4x8xf32>
// CHECK: call @append(%[[CACHE]],
// CHECK-NOT: memref.copy {{.*}} memref<4x8xf32> to memref<4x8xf32>
// CHECK: %[[ROW:.+]] = memref.collapse_shape
// CHECK: vector.store %{{.+}}, %[[SUM]][
// CHECK: memref.copy %[[ROW]], %[[LAST]] : memref<8xf32> to memref<8xf32>
// CHECK: return %{{.+}} : memref<8xf32>
func.func @step(%cache: tensor<4x8xf32> {linnet.state = "cache"}, %sum: tensor<8xf32> {linnet.state = "sum"}, %last: tensor<8xf32> {linnet.state = "last"}, %row: tensor<1x8xf32>, %i: index)
    -> (tensor<8xf32>, tensor<4x8xf32> {linnet.state = "cache"}, tensor<8xf32> {linnet.state = "sum"}, tensor<8xf32> {linnet.state = "last"}) {
  %r = call @append(%cache, %row, %i) : (tensor<4x8xf32>, tensor<1x8xf32>, index) -> tensor<4x8xf32>
  %flat = tensor.collapse_shape %row [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  // The new `sum` is computed in place (linnet-codegen-write-states-in-place
  // makes the state its destination); the new `last` is the row argument
  // itself, copied into the state.
  %e = tensor.empty() : tensor<8xf32>
  %added = linalg.add ins(%sum, %flat : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %old = linalg.mul ins(%sum, %flat : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  return %old, %r, %added, %flat : tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>
}

// One-shot bufferization keeps a delta rule an op (LinnetBufferization.cpp):
// its inputs read where they are, the state updated in place in the buffer
// of its destination, the output written into a fresh buffer, no results.
// RUN: linnet-opt %s --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s

// CHECK-LABEL: func.func @scan
// CHECK-SAME: %[[Q:[^:]*]]: memref<2x?x3x4xf32
// CHECK-SAME: %[[INIT:[^:]*]]: memref<2x3x4x6xf32
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<2x?x3x6xf32>
// CHECK-NOT: memref.copy
// CHECK: linnet.delta_rule %[[Q]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%[[OUT]], %[[INIT]])
// CHECK-SAME: -> ()
// CHECK: return %[[OUT]], %[[INIT]]
func.func @scan(%q: tensor<2x?x3x4xf32>, %k: tensor<2x?x3x4xf32>,
                %v: tensor<2x?x3x6xf32>, %beta: tensor<2x?x3xf32>,
                %g: tensor<2x?x3xf32>, %init: tensor<2x3x4x6xf32>,
                %lengths: tensor<2xi32>)
    -> (tensor<2x?x3x6xf32>, tensor<2x3x4x6xf32>) {
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

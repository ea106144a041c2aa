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

// Attention too: its inputs read where they are, its output written into
// the buffer of its destination (not read: no copy), no result.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: %[[AQ:[^:]*]]: memref<1x4x?x16xbf16
// CHECK-SAME: %[[START:[^:]*]]: index
// CHECK: %[[AOUT:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<1x4x?x16xbf16>
// CHECK-NOT: memref.copy
// CHECK: linnet.attention %[[AQ]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} from %[[START]] into %[[AOUT]]
// CHECK-SAME: -> ()
// CHECK: return %[[AOUT]]
func.func @attention(%q: tensor<1x4x?x16xbf16>, %k: tensor<1x2x64x16xbf16>,
                     %v: tensor<1x2x64x16xbf16>, %offset: tensor<1xi32>,
                     %scale: f32, %start: index) -> tensor<1x4x?x16xbf16> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xbf16>
  %empty = tensor.empty(%s) : tensor<1x4x?x16xbf16>
  %o = linnet.attention %q, %k, %v, %offset, %scale from %start into %empty
      : (tensor<1x4x?x16xbf16>, tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16>,
         tensor<1xi32>, f32, index, tensor<1x4x?x16xbf16>) -> tensor<1x4x?x16xbf16>
  return %o : tensor<1x4x?x16xbf16>
}

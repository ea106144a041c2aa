// With keep-tileable, linnet-lower-to-linalg leaves the ops tiled as ops
// (TilingInterface: every linnet op, here rank, the causal convolution, the
// delta rule and attention) for a target's Codegen; without, it lowers all.
// RUN: linnet-opt %s --linnet-lower-to-linalg="keep-tileable=true" | FileCheck %s
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s --check-prefix=ALL

// CHECK-LABEL: func.func @mixed
// CHECK-NOT: linalg.generic
// CHECK: linnet.rank
// CHECK: linnet.causal_conv
// CHECK: linnet.delta_rule
// CHECK: linnet.attention
// CHECK-NOT: linalg.generic
// ALL-LABEL: func.func @mixed
// ALL-NOT: linnet.
// ALL: return
func.func @mixed(%x: tensor<1x4x3xf32>, %taps: tensor<3x4xf32>, %hist: tensor<1x3x3xf32>,
                 %q: tensor<1x4x2x3xf32>, %b: tensor<1x4x2xf32>, %init: tensor<1x2x3x3xf32>,
                 %len: tensor<1xi32>, %aq: tensor<1x2x4x3xf32>, %scale: f32)
    -> (tensor<1x4x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x3xf32>, tensor<1x4x3xi32>) {
  %r = linnet.rank %x : tensor<1x4x3xf32> -> tensor<1x4x3xi32>
  %y, %h = linnet.causal_conv %x, %taps, %hist, %len
      : (tensor<1x4x3xf32>, tensor<3x4xf32>, tensor<1x3x3xf32>, tensor<1xi32>)
      -> (tensor<1x4x3xf32>, tensor<1x3x3xf32>)
  %e = tensor.empty() : tensor<1x4x2x3xf32>
  %o, %f = linnet.delta_rule %q, %q, %q, %b, %b, %len outs(%e, %init)
      : (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2xf32>,
         tensor<1x4x2xf32>, tensor<1xi32>, tensor<1x4x2x3xf32>, tensor<1x2x3x3xf32>)
      -> (tensor<1x4x2x3xf32>, tensor<1x2x3x3xf32>)
  %init_a = tensor.empty() : tensor<1x2x4x3xf32>
  %a = linnet.attention %aq, %aq, %aq, %len, %scale into %init_a
      : (tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x3xf32>, tensor<1xi32>, f32, tensor<1x2x4x3xf32>)
      -> tensor<1x2x4x3xf32>
  return %y, %f, %a, %r : tensor<1x4x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x3xf32>, tensor<1x4x3xi32>
}

// With keep-sequence-scans (the CUDA target's), linnet-lower-to-linalg
// leaves every delta rule, over a run-time number of tokens (a prompt's) or
// a static one (a decode step's), for the target's warp scan; without, it
// lowers both.
// RUN: linnet-opt %s --linnet-lower-to-linalg="keep-sequence-scans=true" | FileCheck %s
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s --check-prefix=ALL

// CHECK-LABEL: func.func @prompt
// CHECK: linnet.delta_rule {{.*}} -> (tensor<1x?x2x3xf32>, tensor<1x2x3x3xf32>)
// CHECK-LABEL: func.func @step
// CHECK: linnet.delta_rule {{.*}} -> (tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>)
// CHECK-NOT: scf.for
// ALL-LABEL: func.func @prompt
// ALL-NOT: linnet.delta_rule
// ALL-LABEL: func.func @step
// ALL-NOT: linnet.delta_rule
func.func @prompt(%q: tensor<1x?x2x3xf32>, %b: tensor<1x?x2xf32>, %init: tensor<1x2x3x3xf32>,
                  %len: tensor<1xi32>) -> (tensor<1x?x2x3xf32>, tensor<1x2x3x3xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<1x?x2x3xf32>
  %e = tensor.empty(%s) : tensor<1x?x2x3xf32>
  %out, %final = linnet.delta_rule %q, %q, %q, %b, %b, %len outs(%e, %init)
      : (tensor<1x?x2x3xf32>, tensor<1x?x2x3xf32>, tensor<1x?x2x3xf32>, tensor<1x?x2xf32>,
         tensor<1x?x2xf32>, tensor<1xi32>, tensor<1x?x2x3xf32>, tensor<1x2x3x3xf32>)
      -> (tensor<1x?x2x3xf32>, tensor<1x2x3x3xf32>)
  return %out, %final : tensor<1x?x2x3xf32>, tensor<1x2x3x3xf32>
}

func.func @step(%q: tensor<1x1x2x3xf32>, %b: tensor<1x1x2xf32>, %init: tensor<1x2x3x3xf32>,
                %len: tensor<1xi32>) -> (tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>) {
  %e = tensor.empty() : tensor<1x1x2x3xf32>
  %out, %final = linnet.delta_rule %q, %q, %q, %b, %b, %len outs(%e, %init)
      : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>, tensor<1x1x2xf32>,
         tensor<1x1x2xf32>, tensor<1xi32>, tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>)
      -> (tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>)
  return %out, %final : tensor<1x1x2x3xf32>, tensor<1x2x3x3xf32>
}

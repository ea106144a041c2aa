// An elementwise producer is not fused into a consumer that reads it through a
// broadcasting map: a SiLU feeding the down projection of the experts would be
// recomputed for every output column (the exp once per element of `o`). It is
// computed once per tile of its own, before the reduction reads it.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-tile-and-vectorize{vectorize=false}))" | FileCheck %s

// CHECK-LABEL: func.func @silu_into_reduction
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: math.exp
// CHECK: return
#x3 = affine_map<(r, o, i) -> (r, i)>
#w3 = affine_map<(r, o, i) -> (o, i)>
#y3 = affine_map<(r, o, i) -> (r, o)>
#id = affine_map<(r, i) -> (r, i)>
func.func @silu_into_reduction(%x: tensor<4x128xf32>, %w: tensor<64x128xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    %x1 = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %x1 : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x64xf32>) -> tensor<4x64xf32>
  // Not a contraction (the product is squared), so it is a plain reduction generic.
  %y = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %w : tensor<4x128xf32>, tensor<64x128xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %p : f32
    %t = arith.addf %acc, %q : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// A chain of three elementwise generics becomes one dispatch region: one
// scf.forall over rows with one vectorized loop nest, no intermediate tensor.
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg" | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @chain
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: vector.transfer_read
// CHECK: arith.mulf {{.*}} : vector<1x32xf32>
// CHECK: arith.addf {{.*}} : vector<1x32xf32>
// CHECK: math.exp {{.*}} : vector<1x32xf32>
// CHECK: vector.transfer_write
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
func.func @chain(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {llvm.emit_c_interface} {
  %e = tensor.empty() : tensor<64x128xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %x : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %r = linalg.exp ins(%s : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

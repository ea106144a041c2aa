// An op inside an scf.forall (a dispatch region the lowering made, as for
// linnet.expert_matmul's forall over rows and slots) is tiled to vectors but
// gets no scf.forall of its own: nested parallel regions would each fork a
// thread team.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-tile-and-vectorize))" | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK: scf.forall
// CHECK-NOT: scf.forall
// CHECK: vector.fma
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
#w = affine_map<(o, i) -> (o, i)>
#x = affine_map<(o, i) -> (i)>
#y = affine_map<(o, i) -> (o)>
func.func @rows(%x: tensor<4x128xf32>, %w: tensor<64x128xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %r = scf.forall (%i) in (4) shared_outs(%out = %e) -> (tensor<4x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 128] [1, 1] : tensor<4x128xf32> to tensor<128xf32>
    %z = arith.constant 0.0 : f32
    %acc0 = tensor.empty() : tensor<64xf32>
    %acc = linalg.fill ins(%z : f32) outs(%acc0 : tensor<64xf32>) -> tensor<64xf32>
    %y = linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction"]} ins(%w, %row : tensor<64x128xf32>, tensor<128xf32>) outs(%acc : tensor<64xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32):
      %p = arith.mulf %a, %b : f32
      %s = arith.addf %c, %p : f32
      linalg.yield %s : f32
    } -> tensor<64xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %y into %out[%i, 0] [1, 64] [1, 1] : tensor<64xf32> into tensor<4x64xf32>
    }
  }
  return %r : tensor<4x64xf32>
}

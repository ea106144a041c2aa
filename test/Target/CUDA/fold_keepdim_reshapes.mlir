// linnet-cuda-fold-keepdim-reshapes alone: the reshape of a reduction's
// kept axis (sum to [R], expand_shape to [R, 1]) folds into the reduction,
// which then yields [R, 1] itself (the unit axis a loop of its own), next to
// its reader; the reshape of an elementwise op's result stays.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-fold-keepdim-reshapes))" | FileCheck %s

#rk = affine_map<(r, k) -> (r, k)>
#r = affine_map<(r, k) -> (r)>
#rr = affine_map<(r) -> (r)>

// CHECK-LABEL: func.func @kept_axis
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<?x1xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[SUM]] : tensor<?x64xf32>, tensor<?x1xf32>)
func.func @kept_axis(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x64xf32>
  %e = tensor.empty(%rows) : tensor<?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %s = linalg.generic {indexing_maps = [#rk, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<?xf32>
  %kept = tensor.expand_shape %s [[0, 1]] output_shape [%rows, 1] : tensor<?xf32> into tensor<?x1xf32>
  %eo = tensor.empty(%rows) : tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(r, k) -> (r, k)>, affine_map<(r, k) -> (r, 0)>, affine_map<(r, k) -> (r, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %kept : tensor<?x64xf32>, tensor<?x1xf32>) outs(%eo : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK: %[[NEG:.*]] = linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}}outs(%{{.*}} : tensor<8xf32>)
// CHECK: tensor.expand_shape %[[NEG]]
func.func @elementwise(%x: tensor<8xf32>) -> tensor<8x1xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#rr, #rr], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %kept = tensor.expand_shape %n [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  return %kept : tensor<8x1xf32>
}

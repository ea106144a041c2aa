// linnet-cuda-fold-keepdim-reshapes alone: a reshape that only adds or drops
// axes of size 1 is read through by the linalg.generic ops that read it (the
// reader's map reads the source, an axis of size 1 at index 0), so the
// reduction of a kept axis (sum to [R], expand_shape to [R, 1]) stands next to
// its reader; a reshape of a kept axis another op reads folds into its
// reduction instead; a reshape that merges two wide axes stays.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-fold-keepdim-reshapes))" | FileCheck %s

#rk = affine_map<(r, k) -> (r, k)>
#r = affine_map<(r, k) -> (r)>
#rr = affine_map<(r) -> (r)>

// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[UNIT_ROW:.*]] = affine_map<(d0, d1) -> (d0, 0, d1)>

// CHECK-LABEL: func.func @kept_axis
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<?xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROWS]], #{{.*}}]{{.*}}ins(%{{.*}}, %[[SUM]] : tensor<?x64xf32>, tensor<?xf32>)
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

// A reshape that drops a unit axis beside a wide one: the reader reads the
// unit axis at 0.
// CHECK-LABEL: func.func @collapsed_unit_axis
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {indexing_maps = [#[[UNIT_ROW]], #{{.*}}]{{.*}}ins(%{{.*}} : tensor<4x1x8xf32>)
func.func @collapsed_unit_axis(%x: tensor<4x1x8xf32>) -> tensor<4x8xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#rk, #rk], iterator_types = ["parallel", "parallel"]}
      ins(%flat : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// A group of units keeps the reader's expression for its first axis (0
// wherever the reader is in bounds), so that the reader's map is not one of
// constants alone (which would not be tiled, nor its producer fused).
// CHECK-LABEL: func.func @expanded_units
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#[[ROWS]], #{{.*}}]{{.*}}ins(%{{.*}} : tensor<1xf32>)
func.func @expanded_units(%x: tensor<1xf32>) -> tensor<1x8xf32> {
  %units = tensor.expand_shape %x [[0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
  %e = tensor.empty() : tensor<1x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 0)>, #rk], iterator_types = ["parallel", "parallel"]}
      ins(%units : tensor<1x1xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x8xf32>
  return %n : tensor<1x8xf32>
}

// Merging two wide axes is not a unit reshape: it stays.
// CHECK-LABEL: func.func @wide_axes
// CHECK: tensor.collapse_shape
func.func @wide_axes(%x: tensor<4x2x8xf32>) -> tensor<8x8xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x2x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %n = linalg.generic {indexing_maps = [#rk, #rk], iterator_types = ["parallel", "parallel"]}
      ins(%flat : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %n : tensor<8x8xf32>
}

// A kept axis some other op reads (here the function's result) still folds
// into its reduction.
// CHECK-LABEL: func.func @kept_axis_returned
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<8x1xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @kept_axis_returned(%x: tensor<8x64xf32>) -> tensor<8x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#rk, #r], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %kept = tensor.expand_shape %s [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  return %kept : tensor<8x1xf32>
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

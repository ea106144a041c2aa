// RUN: linnet-opt %s --linnet-codegen-slice-producers --canonicalize | FileCheck %s

// A gather of sorted rows back into slot order, split into its two halves
// (a routed gate and up product): each half becomes a gather of its own,
// its index offset by the half's first column, and the SiLU product reads
// the two gathers.
// CHECK-LABEL: func.func @split_gather
// CHECK-SAME: (%[[ROWS:.+]]: tensor<?x2xi32>, %[[SORTED:.+]]: tensor<?x8xf32>)
// CHECK: %[[GATE:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x2x4xf32>)
// CHECK: %[[COL:.+]] = linalg.index 2
// CHECK-NEXT: tensor.extract %[[SORTED]][%{{.+}}, %[[COL]]]
// CHECK: %[[UP:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<?x2x4xf32>)
// CHECK: %[[UPCOL:.+]] = linalg.index 2
// CHECK-NEXT: %[[SHIFTED:.+]] = affine.apply {{.*}}()[%[[UPCOL]]]
// CHECK-NEXT: tensor.extract %[[SORTED]][%{{.+}}, %[[SHIFTED]]]
// CHECK: linalg.generic {{.*}} ins(%[[GATE]], %[[UP]] : tensor<?x2x4xf32>, tensor<?x2x4xf32>)
// CHECK-NOT: tensor.extract_slice %{{.+}} : tensor<?x2x8xf32> to tensor<?x2x4xf32>
func.func @split_gather(%rows: tensor<?x2xi32>, %sorted: tensor<?x8xf32>) -> tensor<?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %rows, %c0 : tensor<?x2xi32>
  %e = tensor.empty(%n) : tensor<?x2x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rows : tensor<?x2xi32>) outs(%e : tensor<?x2x8xf32>) {
  ^bb0(%in: i32, %out: f32):
    %i = arith.index_cast %in : i32 to index
    %col = linalg.index 2 : index
    %x = tensor.extract %sorted[%i, %col] : tensor<?x8xf32>
    linalg.yield %x : f32
  } -> tensor<?x2x8xf32>
  %gate = tensor.extract_slice %g[0, 0, 0] [%n, 2, 4] [1, 1, 1] : tensor<?x2x8xf32> to tensor<?x2x4xf32>
  %up = tensor.extract_slice %g[0, 0, 4] [%n, 2, 4] [1, 1, 1] : tensor<?x2x8xf32> to tensor<?x2x4xf32>
  %e2 = tensor.empty(%n) : tensor<?x2x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%gate, %up : tensor<?x2x4xf32>, tensor<?x2x4xf32>) outs(%e2 : tensor<?x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?x2x4xf32>
  return %r : tensor<?x2x4xf32>
}

// An op some reader takes whole, a reduction, an op sliced only inside a
// region (a dispatch region's tile, which fusion takes), and an op that
// gathers nothing (regions read its slices through) stay as they are.
// CHECK-LABEL: func.func @kept
// CHECK: %[[NEG:.+]] = linalg.generic
// CHECK: tensor.extract_slice %[[NEG]][0] [4] [1]
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK: tensor.extract_slice %[[SUM]][4] [4] [1]
// CHECK: %[[ABS:.+]] = linalg.generic
// CHECK: scf.forall
// CHECK: tensor.extract_slice %[[ABS]]
// CHECK: %[[SQ:.+]] = linalg.generic
// CHECK: tensor.extract_slice %[[SQ]][0] [4] [1]
// CHECK: tensor.extract_slice %[[SQ]][4] [4] [1]
func.func @kept(%x: tensor<8xf32>, %m: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %half = tensor.extract_slice %neg[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<8x8xf32>) outs(%x : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %in, %out : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %part = tensor.extract_slice %sum[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %abs = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = math.absf %in : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %tiled = scf.forall (%i) in (2) shared_outs(%o = %e) -> (tensor<8xf32>) {
    %off = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
    %s = tensor.extract_slice %abs[%off] [4] [1] : tensor<8xf32> to tensor<4xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%off] [4] [1] : tensor<4xf32> into tensor<8xf32>
    }
  }
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %in : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %lo = tensor.extract_slice %sq[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %hi = tensor.extract_slice %sq[4] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %neg, %half, %part, %tiled, %lo, %hi : tensor<8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<4xf32>
}

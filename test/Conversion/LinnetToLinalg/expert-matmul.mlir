// With static rows, fewer than four slots per expert (a decode),
// linnet.expert_matmul becomes an scf.forall over (r, j) whose body slices the
// chosen expert's [O, I] weights out of the stacked tensor (a clamped id: an
// out-of-range one reads expert 0 and its result is replaced by zeros) and
// runs one matrix-vector product on them in f32, then rounds it. Only the
// chosen experts' weights are read.
// RUN: linnet-opt %s --linnet-lower-to-linalg | FileCheck %s

// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @expert_matmul
// CHECK-SAME: (%[[X_ARG:.*]]: tensor<3x16xf16>, %[[XK:.*]]: tensor<3x2x16xf16>, %[[W_ARG:.*]]: tensor<?x32x16xf16>, %[[IDS:.*]]: tensor<3x2xi32>)
func.func @expert_matmul(%x: tensor<3x16xf16>, %xk: tensor<3x2x16xf16>,
                         %w: tensor<?x32x16xf16>, %ids: tensor<3x2xi32>)
    -> (tensor<3x2x32xf16>, tensor<3x2x32xf16>) {
  // CHECK-NOT: linnet.
  // CHECK: %[[NUM:.*]] = tensor.dim %[[W_ARG]], %c0
  // CHECK: scf.forall (%[[R:.*]], %[[J:.*]]) in (3, 2)
  // CHECK: %[[ID:.*]] = tensor.extract %[[IDS]][%[[R]], %[[J]]] : tensor<3x2xi32>
  // CHECK: %[[E:.*]] = arith.index_cast %[[ID]] : i32 to index
  // CHECK: arith.cmpi sge, %[[E]], %{{.*}}
  // CHECK: arith.cmpi slt, %[[E]], %[[NUM]]
  // CHECK: %[[VALID:.*]] = arith.andi
  // CHECK: %[[SAFE:.*]] = arith.select %[[VALID]], %[[E]], %{{.*}} : index
  // CHECK: %[[MATRIX:.*]] = tensor.extract_slice %[[W_ARG]][%[[SAFE]], 0, 0] [1, 32, 16] [1, 1, 1] : tensor<?x32x16xf16> to tensor<32x16xf16>
  // CHECK: %[[ROW:.*]] = tensor.extract_slice %[[X_ARG]][%[[R]], 0] [1, 16] [1, 1] : tensor<3x16xf16> to tensor<16xf16>
  // CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[Y]]], iterator_types = ["parallel", "reduction"]} ins(%[[MATRIX]], %[[ROW]] : {{.*}}) outs(%{{.*}} : tensor<32xf32>)
  // CHECK: arith.extf
  // The rounding zeroes an invalid slot's outputs element by element: no
  // select of whole tensors, which left bufferization two buffers to choose
  // from for the one slice.
  // CHECK: %[[SLOT:.*]] = linalg.generic {{.*}} ins(%[[SUMS]] : tensor<32xf32>) outs(%{{.*}} : tensor<32xf16>)
  // CHECK: %[[ROUNDED:.*]] = arith.truncf %{{.*}} : f32 to f16
  // CHECK: arith.select %[[VALID]], %[[ROUNDED]], %{{.*}} : f16
  // CHECK-NOT: arith.select {{.*}} : tensor
  // CHECK: tensor.parallel_insert_slice %[[SLOT]] into %{{.*}}[%[[R]], %[[J]], 0] [1, 1, 32] [1, 1, 1]
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<3x16xf16>, tensor<?x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  // CHECK: scf.forall (%[[R2:.*]], %[[J2:.*]]) in (3, 2)
  // CHECK: tensor.extract_slice %[[XK]][%[[R2]], %[[J2]], 0] [1, 1, 16] [1, 1, 1] : tensor<3x2x16xf16> to tensor<16xf16>
  %1 = linnet.expert_matmul %xk, %w, %ids
      : (tensor<3x2x16xf16>, tensor<?x32x16xf16>, tensor<3x2xi32>)
      -> tensor<3x2x32xf16>
  return %0, %1 : tensor<3x2x32xf16>, tensor<3x2x32xf16>
}

// With dynamic rows (a block function that prefill and decode share) the
// form is chosen at run time: with at least four slots per expert (R * 2 >=
// 4 * 4) the grouped form, a counting sort of the slots by expert (sequential loops over the slots and the experts), the
// inputs gathered in sorted order, one scf.forall over tiles of 8 sorted rows
// each multiplied by its expert's [O, I] weights, and each slot's result
// gathered back from its sorted row; otherwise the form of one product per
// slot.
// CHECK-LABEL: func.func @grouped
// CHECK-SAME: (%[[GX:.*]]: tensor<?x16xbf16>, %[[GW:.*]]: tensor<4x32x16xbf16>, %[[GIDS:.*]]: tensor<?x2xi32>)
// CHECK: %[[MANY:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : index
// CHECK: scf.if %[[MANY]]
// CHECK: scf.for
// CHECK: tensor.extract %[[GIDS]]
// CHECK: tensor.insert
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x16xbf16>)
// CHECK: scf.forall (%[[T:.*]]) in (%{{.*}})
// CHECK: tensor.extract_slice %[[GW]][%{{.*}}, 0, 0] [1, 32, 16] [1, 1, 1] : tensor<4x32x16xbf16> to tensor<32x16xbf16>
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [8, 16] [1, 1] : tensor<?x16xbf16> to tensor<8x16xbf16>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs(%{{.*}} : tensor<8x32xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}}[%{{.*}}, 0] [8, 32] [1, 1] : tensor<8x32xbf16> into tensor<?x32xbf16>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x2x32xbf16>)
// CHECK: } else {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, 2)
func.func @grouped(%x: tensor<?x16xbf16>, %w: tensor<4x32x16xbf16>, %ids: tensor<?x2xi32>)
    -> tensor<?x2x32xbf16> {
  %0 = linnet.expert_matmul %x, %w, %ids
      : (tensor<?x16xbf16>, tensor<4x32x16xbf16>, tensor<?x2xi32>)
      -> tensor<?x2x32xbf16>
  return %0 : tensor<?x2x32xbf16>
}

// RUN: linnet-opt %s --split-input-file --linnet-codegen-parallel-scatters | FileCheck %s

// Each row's key at its own position, as IR generation writes
// `cache[arange(B), :, positions, :] = keys`: the arange's element read back
// is the loop's index, so the rows' places differ and the loop is a forall,
// each iteration copying its slice into its place.
// CHECK-LABEL: func.func @rows_at_positions
// CHECK-SAME: (%[[CACHE:[^:]+]]: tensor<4x2x64x16xf32>, %[[KEYS:[^:]+]]: tensor<4x2x16xf32>, %[[POS:[^:]+]]: tensor<4xi32>)
// CHECK-NOT: scf.for
// CHECK: %[[NEW:.+]] = scf.forall (%[[I:.+]]) in (4) shared_outs(%[[OUT:.+]] = %[[CACHE]]) -> (tensor<4x2x64x16xf32>)
// CHECK: %[[KEY:.+]] = tensor.extract_slice %[[KEYS]][%[[I]], 0, 0] [1, 2, 16] [1, 1, 1]
// CHECK: %[[AT:.+]] = tensor.extract %[[POS]][%[[I]]]
// CHECK: %[[P:.+]] = arith.index_cast %[[AT]] : i32 to index
// CHECK: %[[ROW:.+]] = tensor.expand_shape %[[KEY]]
// CHECK: %[[PLACE:.+]] = tensor.extract_slice %[[OUT]][%[[I]], 0, %[[P]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// CHECK: %[[COPY:.+]] = linalg.copy ins(%[[ROW]] : tensor<1x2x1x16xf32>) outs(%[[PLACE]] : tensor<1x2x1x16xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[COPY]] into %[[OUT]][%[[I]], 0, %[[P]], 0] [1, 2, 1, 16] [1, 1, 1, 1]
// CHECK: return %[[NEW]]
func.func @rows_at_positions(%cache: tensor<4x2x64x16xf32>, %keys: tensor<4x2x16xf32>, %positions: tensor<4xi32>) -> tensor<4x2x64x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %empty = tensor.empty() : tensor<4xi32>
  %rows = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%empty : tensor<4xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %i32 = arith.index_cast %i : index to i32
    linalg.yield %i32 : i32
  } -> tensor<4xi32>
  %new = scf.for %b = %c0 to %c4 step %c1 iter_args(%acc = %cache) -> (tensor<4x2x64x16xf32>) {
    %key = tensor.extract_slice %keys[%b, 0, 0] [1, 2, 16] [1, 1, 1] : tensor<4x2x16xf32> to tensor<1x2x16xf32>
    %r32 = tensor.extract %rows[%b] : tensor<4xi32>
    %r = arith.index_cast %r32 : i32 to index
    %p32 = tensor.extract %positions[%b] : tensor<4xi32>
    %p = arith.index_cast %p32 : i32 to index
    %row = tensor.expand_shape %key [[0], [1], [2, 3]] output_shape [1, 2, 1, 16] : tensor<1x2x16xf32> into tensor<1x2x1x16xf32>
    %put = tensor.insert_slice %row into %acc[%r, 0, %p, 0] [1, 2, 1, 16] [1, 1, 1, 1] : tensor<1x2x1x16xf32> into tensor<4x2x64x16xf32>
    scf.yield %put : tensor<4x2x64x16xf32>
  }
  return %new : tensor<4x2x64x16xf32>
}

// -----

// Rows given by an index tensor (`cache[slots] = keys`) may repeat: the
// later write wins, so the loop stays a loop.
// CHECK-LABEL: func.func @rows_at_slots
// CHECK: scf.for
// CHECK: tensor.insert_slice
// CHECK-NOT: scf.forall
func.func @rows_at_slots(%cache: tensor<4x16xf32>, %keys: tensor<2x16xf32>, %slots: tensor<2xi32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %new = scf.for %b = %c0 to %c2 step %c1 iter_args(%acc = %cache) -> (tensor<4x16xf32>) {
    %key = tensor.extract_slice %keys[%b, 0] [1, 16] [1, 1] : tensor<2x16xf32> to tensor<1x16xf32>
    %s32 = tensor.extract %slots[%b] : tensor<2xi32>
    %s = arith.index_cast %s32 : i32 to index
    %put = tensor.insert_slice %key into %acc[%s, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
    scf.yield %put : tensor<4x16xf32>
  }
  return %new : tensor<4x16xf32>
}

// -----

// The loop's index as an offset, but two elements along that axis: the
// places of consecutive iterations overlap, and the loop stays.
// CHECK-LABEL: func.func @overlapping
// CHECK: scf.for
// CHECK-NOT: scf.forall
func.func @overlapping(%dest: tensor<8x16xf32>, %rows: tensor<2x16xf32>) -> tensor<8x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %new = scf.for %b = %c0 to %c4 step %c1 iter_args(%acc = %dest) -> (tensor<8x16xf32>) {
    %put = tensor.insert_slice %rows into %acc[%b, 0] [2, 16] [1, 1] : tensor<2x16xf32> into tensor<8x16xf32>
    scf.yield %put : tensor<8x16xf32>
  }
  return %new : tensor<8x16xf32>
}

// -----

// The carried tensor read in the body besides the insert (a later row's
// place depends on what the earlier rows wrote): the loop stays.
// CHECK-LABEL: func.func @reads_carried
// CHECK: scf.for
// CHECK-NOT: scf.forall
func.func @reads_carried(%dest: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %new = scf.for %b = %c0 to %c3 step %c1 iter_args(%acc = %dest) -> (tensor<4x16xf32>) {
    %n = arith.addi %b, %c1 : index
    %next = tensor.extract_slice %acc[%n, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %put = tensor.insert_slice %next into %acc[%b, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
    scf.yield %put : tensor<4x16xf32>
  }
  return %new : tensor<4x16xf32>
}

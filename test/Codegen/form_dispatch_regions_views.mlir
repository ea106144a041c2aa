// linnet-codegen-form-dispatch-regions with fuse-through-reshapes (the
// CUDA target's): a region of a static grid (a decode step's) takes in the
// producer of a tile it reads through a reshape or a slice, where the tile
// is a box of the producer's result; a static product (a decode GEMV) takes
// in the producers of its input as any root does, and a small reduction
// even where its tile is wider than its own; a concatenation is read as the
// concatenation of its pieces' slices (a key's rotated quarter and the rest).
// Configurations pinned.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks fuse-into-lowered-regions fuse-through-reshapes}),canonicalize)" | FileCheck %s
// Without it, each of them is a region of its own.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks fuse-into-lowered-regions}),canonicalize)" | FileCheck %s --check-prefix=APART

#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
#tr4 = affine_map<(a, b, c, d) -> (a, c, b, d)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
#x = affine_map<(a, b, n, k) -> (a, b, k)>
#w = affine_map<(a, b, n, k) -> (n, k)>
#y = affine_map<(a, b, n, k) -> (a, b, n)>

// An attention's heads, [1, 4, 1, 8] moved to [1, 1, 4, 8] and read as 32
// features by o_proj's GEMV after the gate: each of its blocks gathers
// them itself.
// CHECK-LABEL: func.func @heads_into_gemv(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %[[N:.*]]) = (0, 0, 0) to (1, 1, 16) step (1, 1, 2)
// CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<1x4x1x8xf32>) outs(%{{.*}} : tensor<1x1x4x8xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<1x1x4x8xf32> into tensor<1x1x32xf32>
// CHECK: arith.mulf
// CHECK: "reduction"
// CHECK-NOT: scf.forall (
// CHECK: return
// APART-LABEL: func.func @heads_into_gemv(
// APART: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (1, 1, 4, 8)
// APART: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 1, 16) step (1, 1, 2)
func.func @heads_into_gemv(%att: tensor<1x4x1x8xf32>, %gate: tensor<1x1x32xf32>, %w: tensor<16x32xf32>, %acc: tensor<1x1x16xf32>) -> tensor<1x1x16xf32> {
  %e = tensor.empty() : tensor<1x1x4x8xf32>
  %t = linalg.generic {indexing_maps = [#tr4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 4, 8], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%att : tensor<1x4x1x8xf32>) outs(%e : tensor<1x1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x1x4x8xf32>
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<1x1x4x8xf32> into tensor<1x1x32xf32>
  %e2 = tensor.empty() : tensor<1x1x32xf32>
  %m = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 32], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%c, %gate : tensor<1x1x32xf32>, tensor<1x1x32xf32>) outs(%e2 : tensor<1x1x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<1x1x32xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 2, 0], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%m, %w : tensor<1x1x32xf32>, tensor<16x32xf32>) outs(%acc : tensor<1x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x1x16xf32>
  return %y : tensor<1x1x16xf32>
}

// A convolution's 64 channels, of which the first 32 are 4 heads of 8: a
// region of a head computes its 8 channels, at 8 times the head (the slice
// [0:32] and the expand to [1, 1, 4, 8] both read through).
// CHECK-LABEL: func.func @channels_per_head(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %[[H:.*]]) in (1, 1, 4)
// CHECK: %[[AT:.*]] = affine.apply #{{[a-z0-9]+}}(){{\[}}%[[H]]]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %[[AT]]] [1, 1, 8] [1, 1, 1] : tensor<1x1x64xf32> to tensor<1x1x8xf32>
// CHECK: math.exp
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, 1, 1, 8] : tensor<1x1x8xf32> into tensor<1x1x1x8xf32>
// CHECK: arith.addf
// CHECK-NOT: scf.forall (
// CHECK: return
// APART-LABEL: func.func @channels_per_head(
// APART: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (1, 1, 64)
// APART: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 4)
func.func @channels_per_head(%x: tensor<1x1x64xf32>, %bias: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x1x64xf32>
  %conv = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 64], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%x : tensor<1x1x64xf32>) outs(%e : tensor<1x1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1x1x64xf32>
  %q = tensor.extract_slice %conv[0, 0, 0] [1, 1, 32] [1, 1, 1] : tensor<1x1x64xf32> to tensor<1x1x32xf32>
  %heads = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, 1, 4, 8] : tensor<1x1x32xf32> into tensor<1x1x4x8xf32>
  %e2 = tensor.empty() : tensor<1x1x4x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 1, 0], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%heads, %bias : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) outs(%e2 : tensor<1x1x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x1x4x8xf32>
  return %r : tensor<1x1x4x8xf32>
}

#hk = affine_map<(h, k) -> (h, k)>
#h = affine_map<(h, k) -> (h)>
#x2 = affine_map<(n, k) -> (k)>
#w2 = affine_map<(n, k) -> (n, k)>
#y2 = affine_map<(n, k) -> (n)>
#n1 = affine_map<(n) -> (n)>

// A gated norm's sums of squares over 4 heads (its own tile: a head) read
// whole, through the heads' collapse, by the output projection's GEMV: each
// GEMV block computes all 4 sums, small beside its weights. An elementwise
// region reading them whole (no weight) leaves the sums their own region.
// CHECK-LABEL: func.func @small_sums_into_gemv(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (2)
// CHECK: arith.mulf %[[V:.*]], %[[V]] : f32
// CHECK: arith.divf
// CHECK: "reduction"
// CHECK-NOT: scf.forall (
// CHECK: return
// CHECK-LABEL: func.func @small_sums_apart(
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK: arith.mulf %[[V2:.*]], %[[V2]] : f32
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 8) step (4, 8)
// CHECK: arith.divf
// CHECK: scf.forall (%{{.*}}) = (0) to (32) step (32)
// CHECK: math.exp
// CHECK: return
func.func @small_sums_into_gemv(%x: tensor<4x8xf32>, %w: tensor<16x32xf32>, %acc0: tensor<4xf32>, %acc: tensor<16xf32>) -> tensor<16xf32> {
  %ss = linalg.generic {indexing_maps = [#hk, #h], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x8xf32>) outs(%acc0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#hk, #h, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 8], reduction = [0, 0], vector = [0, 0]>} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %flat = tensor.collapse_shape %n [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %y = linalg.generic {indexing_maps = [#x2, #w2, #y2], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [2, 0], reduction = [0, 0], vector = [0, 0]>} ins(%flat, %w : tensor<32xf32>, tensor<16x32xf32>) outs(%acc : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %y : tensor<16xf32>
}

func.func @small_sums_apart(%x: tensor<4x8xf32>, %acc0: tensor<4xf32>) -> tensor<32xf32> {
  %ss = linalg.generic {indexing_maps = [#hk, #h], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x8xf32>) outs(%acc0 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#hk, #h, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [4, 8], reduction = [0, 0], vector = [0, 0]>} ins(%x, %ss : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %q = arith.divf %a, %s : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %flat = tensor.collapse_shape %n [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#n1, #n1], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [32], reduction = [0], vector = [0]>} ins(%flat : tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// One element a block of a collapsed [4, 8]: the block computes the
// producer's element at its place in each axis (i floordiv 8, i mod 8).
// CHECK-LABEL: func.func @element_of_collapse(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%[[I:.*]]) in (32)
// CHECK-DAG: %[[ROW:.*]] = affine.apply #{{[a-z0-9]+}}(){{\[}}%[[I]]]
// CHECK-DAG: %[[COL:.*]] = affine.apply #{{[a-z0-9]+}}(){{\[}}%[[I]]]
// CHECK: tensor.extract_slice %{{.*}}{{\[}}%[[ROW]], %[[COL]]] [1, 1] [1, 1] : tensor<4x8xf32> to tensor<1x1xf32>
// CHECK: math.exp
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<1x1xf32> into tensor<1xf32>
// CHECK: arith.mulf
// CHECK-NOT: scf.forall (
// CHECK: return
// APART-LABEL: func.func @element_of_collapse(
// APART: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 8) step (4, 8)
// APART: scf.forall (%{{.*}}) in (32)
func.func @element_of_collapse(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#hk, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [4, 8], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %flat = tensor.collapse_shape %p [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %r = linalg.generic {indexing_maps = [#n1, #n1], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1], reduction = [0], vector = [0]>} ins(%flat : tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.mulf %a, %a : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  return %r : tensor<32xf32>
}

// A prompt's region (a run-time row count) reads through no view: the
// moved heads stay a region of their own.
// CHECK-LABEL: func.func @prompt_heads_apart(
// CHECK: scf.forall (
// CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<1x4x1x8xf32>)
// CHECK: tensor.collapse_shape
// CHECK: scf.forall (
// CHECK: "reduction"
func.func @prompt_heads_apart(%att: tensor<?x4x1x8xf32>, %w: tensor<16x32xf32>, %acc: tensor<?x1x16xf32>) -> tensor<?x1x16xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %att, %c0 : tensor<?x4x1x8xf32>
  %e = tensor.empty(%rows) : tensor<?x1x4x8xf32>
  %t = linalg.generic {indexing_maps = [#tr4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 4, 8], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%att : tensor<?x4x1x8xf32>) outs(%e : tensor<?x1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<?x1x4x8xf32>
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<?x1x4x8xf32> into tensor<?x1x32xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 2, 0], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%c, %w : tensor<?x1x32xf32>, tensor<16x32xf32>) outs(%acc : tensor<?x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x1x16xf32>
  return %y : tensor<?x1x16xf32>
}

// A key's row, its rotated quarter and the rest concatenated, copied into
// its cache slot at a run-time position: the region of each key head
// computes both pieces of its head itself (the concatenation read as the
// same concatenation of the pieces' slices), into the slot.
// CHECK-LABEL: func.func @rotated_row(
// CHECK-NOT: scf.forall (
// CHECK: %[[SLOT:.*]] = tensor.extract_slice %{{.*}}[0, 0, %{{.*}}, 0] [1, 2, 1, 16]
// CHECK: scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}, %{{.*}}) = (0, 0, 0, 0) to (1, 2, 1, 16) step (1, 1, 1, 16) shared_outs(%{{.*}} = %[[SLOT]])
// CHECK: tensor.extract_slice %{{.*}}[0, %[[H]], 0, 0] [1, 1, 1, 4]
// CHECK: arith.negf
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 1, 1, 4]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[H]], 0, 4] [1, 1, 1, 12]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 4] [1, 1, 1, 12]
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: scf.forall (
// CHECK: return
// APART-LABEL: func.func @rotated_row(
// APART: scf.forall
// APART: arith.negf
// APART: scf.forall
// APART-NOT: arith.negf
// APART: return
func.func @rotated_row(%k: tensor<1x2x1x16xf32>, %cache: tensor<1x2x64x16xf32>, %pos: index) -> tensor<1x2x64x16xf32> {
  %e4 = tensor.empty() : tensor<1x2x1x4xf32>
  %k4 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x2x1x4xf32>
  %rot = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 2, 1, 4], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%k4 : tensor<1x2x1x4xf32>) outs(%e4 : tensor<1x2x1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x1x4xf32>
  %pass = tensor.extract_slice %k[0, 0, 0, 4] [1, 2, 1, 12] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x2x1x12xf32>
  %e = tensor.empty() : tensor<1x2x1x16xf32>
  %c0 = tensor.insert_slice %rot into %e[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x1x16xf32>
  %c1 = tensor.insert_slice %pass into %c0[0, 0, 0, 4] [1, 2, 1, 12] [1, 1, 1, 1] : tensor<1x2x1x12xf32> into tensor<1x2x1x16xf32>
  %slot = tensor.extract_slice %cache[0, 0, %pos, 0] [1, 2, 1, 16] [1, 1, 1, 1] : tensor<1x2x64x16xf32> to tensor<1x2x1x16xf32>
  %copy = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 1, 16], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%c1 : tensor<1x2x1x16xf32>) outs(%slot : tensor<1x2x1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x2x1x16xf32>
  %r = tensor.insert_slice %copy into %cache[0, 0, %pos, 0] [1, 2, 1, 16] [1, 1, 1, 1] : tensor<1x2x1x16xf32> into tensor<1x2x64x16xf32>
  return %r : tensor<1x2x64x16xf32>
}

// A region of a concatenation's first quarter, 2 of its 4 elements a
// block: the slice falls within the first piece and is taken of it, so
// the piece's producer joins.
// CHECK-LABEL: func.func @within_piece(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}, %[[D:.*]]) = (0, 0, 0, 0) to (1, 2, 1, 4) step (1, 2, 1, 2)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, %[[D]]] [1, 2, 1, 2]
// CHECK: arith.negf
// CHECK: math.exp
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @within_piece(%k: tensor<1x2x1x16xf32>) -> tensor<1x2x1x4xf32> {
  %e4 = tensor.empty() : tensor<1x2x1x4xf32>
  %k4 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x2x1x4xf32>
  %rot = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 2, 1, 4], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%k4 : tensor<1x2x1x4xf32>) outs(%e4 : tensor<1x2x1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x1x4xf32>
  %pass = tensor.extract_slice %k[0, 0, 0, 4] [1, 2, 1, 12] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x2x1x12xf32>
  %e = tensor.empty() : tensor<1x2x1x16xf32>
  %c0 = tensor.insert_slice %rot into %e[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x1x16xf32>
  %c1 = tensor.insert_slice %pass into %c0[0, 0, 0, 4] [1, 2, 1, 12] [1, 1, 1, 1] : tensor<1x2x1x12xf32> into tensor<1x2x1x16xf32>
  %first = tensor.extract_slice %c1[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x16xf32> to tensor<1x2x1x4xf32>
  %out = tensor.empty() : tensor<1x2x1x4xf32>
  %x = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 2, 1, 2], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%first : tensor<1x2x1x4xf32>) outs(%out : tensor<1x2x1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %x = math.exp %a : f32
    linalg.yield %x : f32
  } -> tensor<1x2x1x4xf32>
  return %x : tensor<1x2x1x4xf32>
}

// linnet-codegen-form-dispatch-regions with fuse-tileable-producers (the
// CUDA target's): a root's region takes in a producer that tiles but is no
// linalg op (a routed product the lowering left, linnet.expert_matmul: a
// decode's experts' down projection), a tile of it in each tile of the
// region, where no two tiles read the same part of it (each expert weight
// row is then read once), with the producers of its operands: the
// combination that weighs the slots computes its outputs' products itself.
// A region whose tiles all read the whole product leaves it alone, and so
// does the pass without the option. Configurations pinned.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks fuse-tileable-producers}),canonicalize)" | FileCheck %s
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks}),canonicalize)" | FileCheck %s --check-prefix=APART

#id3 = affine_map<(r, j, i) -> (r, j, i)>
#slots = affine_map<(r, o, j) -> (r, j, o)>
#weights = affine_map<(r, o, j) -> (r, j)>
#sum = affine_map<(r, o, j) -> (r, o)>
#row = affine_map<(r, o) -> (r, o)>
#firstOut = affine_map<(r, j, o) -> (r, j, 0)>

// The weighted sum over 4 slots of 16 outputs and the residual sum, 8
// outputs a block: each block computes the 4 slots' products of its 8
// outputs, after the SiLU of their input rows.
// CHECK-LABEL: func.func @weighted_slots(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall (%{{.*}}, %[[O:.*]]) = (0, 0) to (1, 16) step (1, 8)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x32xf32>)
// CHECK: math.exp
// CHECK: tensor.extract_slice %{{.*}}[0, %[[O]], 0] [64, 8, 32] [1, 1, 1] : tensor<64x16x32xf32> to tensor<64x8x32xf32>
// CHECK: linnet.expert_matmul {{.*}} : (tensor<1x4x32xf32>, tensor<64x8x32xf32>, tensor<1x4xi32>) -> tensor<1x4x8xf32>
// CHECK: "reduction"
// CHECK-NOT: scf.forall (
// CHECK: return
// APART-LABEL: func.func @weighted_slots(
// APART: scf.forall
// APART: math.exp
// APART: linnet.expert_matmul {{.*}} -> tensor<1x4x16xf32>
// APART: scf.forall
// APART-NOT: linnet.expert_matmul
// APART: return
func.func @weighted_slots(%gate: tensor<1x4x32xf32>, %w: tensor<64x16x32xf32>, %ids: tensor<1x4xi32>, %p: tensor<1x4xf32>, %acc: tensor<1x16xf32>, %h: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %e = tensor.empty() : tensor<1x4x32xf32>
  %silu = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 4, 32], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%gate : tensor<1x4x32xf32>) outs(%e : tensor<1x4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %x, %one : f32
    %s = arith.divf %a, %d : f32
    linalg.yield %s : f32
  } -> tensor<1x4x32xf32>
  %y = linnet.expert_matmul %silu, %w, %ids : (tensor<1x4x32xf32>, tensor<64x16x32xf32>, tensor<1x4xi32>) -> tensor<1x4x16xf32>
  %sum = linalg.generic {indexing_maps = [#slots, #weights, #sum], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 8, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%y, %p : tensor<1x4x16xf32>, tensor<1x4xf32>) outs(%acc : tensor<1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  %e2 = tensor.empty() : tensor<1x16xf32>
  %res = linalg.generic {indexing_maps = [#row, #row, #row], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 8], reduction = [0, 0], vector = [0, 0]>} ins(%sum, %h : tensor<1x16xf32>, tensor<1x16xf32>) outs(%e2 : tensor<1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x16xf32>
  return %res : tensor<1x16xf32>
}

// -----

// Each block of 8 outputs reads the first output of every slot (a
// broadcast): every tile would compute that part of the product again,
// reading its weight rows once a tile, so it stays apart.
// CHECK-LABEL: func.func @read_alike(
// CHECK: linnet.expert_matmul {{.*}} -> tensor<1x4x16xf32>
// CHECK: scf.forall
// CHECK-NOT: linnet.expert_matmul
// CHECK: return
func.func @read_alike(%x: tensor<1x4x32xf32>, %w: tensor<64x16x32xf32>, %ids: tensor<1x4xi32>, %acc: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %y = linnet.expert_matmul %x, %w, %ids : (tensor<1x4x32xf32>, tensor<64x16x32xf32>, tensor<1x4xi32>) -> tensor<1x4x16xf32>
  %b = linalg.generic {indexing_maps = [#firstOut, #id3], iterator_types = ["parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 4, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%y : tensor<1x4x16xf32>) outs(%acc : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16xf32>
  return %b : tensor<1x4x16xf32>
}

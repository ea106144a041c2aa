// linnet-codegen-form-dispatch-regions alone, configurations pinned: a root
// is tiled with an scf.forall of its `thread` sizes and its producers join
// the tile (a contraction takes only its accumulator's fill; a constant
// fill joins every region that reads it, even shared); an op inside an
// scf.forall (a region the lowering made, as for linnet.expert_matmul) gets
// no nested forall; an op without a configuration is left alone.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions))" | FileCheck %s
// With fuse-reductions (a GPU's) a contraction joins its consumer's region
// too; with map-to-blocks each forall carries GPU block mappings; with
// max-fused-tile-bytes a producer of a larger tile stays out.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks}))" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks max-fused-tile-bytes=32768}))" | FileCheck %s --check-prefix=LIMIT
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks},canonicalize))" | FileCheck %s --check-prefix=RECOMPUTE
// With fuse-into-lowered-regions a region the lowering formed (an
// scf.forall already there) takes in the producers of the slices its body
// takes, as a root's region does.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-form-dispatch-regions{fuse-reductions map-to-blocks fuse-into-lowered-regions}))" | FileCheck %s --check-prefix=INTO

// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 96) step (64, 32)
// CHECK: linalg.fill
// CHECK: linalg.matmul {linnet.lowering_config = #linnet.lowering_config<thread = [64, 32, 0], reduction = [0, 0, 256], vector = [8, 16, 1]>} ins(%{{.*}}, %{{.*}} : tensor<64x300xf32>, tensor<300x32xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
func.func @matmul(%a: tensor<128x300xf32>, %b: tensor<300x96xf32>) -> tensor<128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x96xf32>
  %c = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [16, 0], reduction = [], vector = [1, 32]>} ins(%zero : f32) outs(%e : tensor<128x96xf32>) -> tensor<128x96xf32>
  %r = linalg.matmul {linnet.lowering_config = #linnet.lowering_config<thread = [64, 32, 0], reduction = [0, 0, 256], vector = [8, 16, 1]>} ins(%a, %b : tensor<128x300xf32>, tensor<300x96xf32>) outs(%c : tensor<128x96xf32>) -> tensor<128x96xf32>
  return %r : tensor<128x96xf32>
}

// CHECK-LABEL: func.func @already_in_forall
// CHECK: scf.forall (%{{.*}}) in (4)
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}linnet.lowering_config
// CHECK: scf.forall.in_parallel
// CHECK-NOT: scf.forall
// CHECK: return
#w = affine_map<(o, i) -> (o, i)>
#x = affine_map<(o, i) -> (i)>
#y = affine_map<(o, i) -> (o)>
func.func @already_in_forall(%x: tensor<4x128xf32>, %w: tensor<64x128xf32>, %acc: tensor<64xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %r = scf.forall (%i) in (4) shared_outs(%out = %e) -> (tensor<4x64xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 128] [1, 1] : tensor<4x128xf32> to tensor<128xf32>
    %y = linalg.generic {indexing_maps = [#w, #x, #y], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [8, 0], reduction = [0, 0], vector = [1, 32]>} ins(%w, %row : tensor<64x128xf32>, tensor<128xf32>) outs(%acc : tensor<64xf32>) {
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

// CHECK-LABEL: func.func @unconfigured
// CHECK-NOT: scf.forall
// CHECK: linalg.exp
func.func @unconfigured(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.exp ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// An op tiled as an op is a root too: its tile is the same op on slices, its
// destinations (the delta rule's state) the loop's shared outputs, so the
// state is written where it was read. Its operands' producers stay outside.
// CHECK-LABEL: func.func @delta_rule
// CHECK-SAME: %[[INIT:[^:]+]]: tensor<2x4x8x8xf32>
// CHECK: linalg.generic
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 4) shared_outs(%{{.*}} = %{{.*}}, %[[STATE:.*]] = %[[INIT]])
// CHECK: %[[STATE_T:.*]] = tensor.extract_slice %[[STATE]]
// CHECK: linnet.delta_rule {{.*}} outs(%{{.*}}, %[[STATE_T]])
// CHECK-SAME: -> (tensor<1x?x1x8xf32>, tensor<1x1x8x8xf32>)
// CHECK: scf.forall.in_parallel
func.func @delta_rule(%q: tensor<2x?x4x8xf32>, %b: tensor<2x?x4xf32>,
                      %init: tensor<2x4x8x8xf32>, %len: tensor<2xi32>)
    -> (tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<2x?x4x8xf32>
  %e = tensor.empty(%s) : tensor<2x?x4x8xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      {linnet.lowering_config = #linnet.lowering_config<thread = [0, 0, 0, 0], reduction = [], vector = [1, 1, 1, 8]>}
      ins(%q : tensor<2x?x4x8xf32>) outs(%e : tensor<2x?x4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<2x?x4x8xf32>
  %o, %f = linnet.delta_rule %q, %k, %q, %b, %b, %len outs(%e, %init)
      {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2xi32>, tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>)
      -> (tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>)
  return %o, %f : tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>
}

// One zero fill, the accumulator of two row sums: each region fills its own
// tile of it (a generic of no inputs yielding a constant), and the fill
// outside is gone, so it is neither a region nor a copy of its own.
// CHECK-LABEL: func.func @shared_fill
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (8)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield %cst
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (8)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: return
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i) -> (i)>
func.func @shared_fill(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %z = linalg.generic {indexing_maps = [#all], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [64], reduction = [0], vector = [0]>} outs(%e : tensor<64xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  } -> tensor<64xf32>
  %sx = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [8, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<64x128xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %sy = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [8, 0], reduction = [0, 0], vector = [0, 0]>} ins(%y : tensor<64x128xf32>) outs(%z : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %sx, %sy : tensor<64xf32>, tensor<64xf32>
}

// A GEMV's f32 sums rounded to bf16: without fuse-reductions two regions,
// with it one, the GEMV's tile inside the rounding's.
// CHECK-LABEL: func.func @gemv_rounded
// CHECK: scf.forall
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: scf.forall
// CHECK: arith.truncf
// GPU-LABEL: func.func @gemv_rounded
// GPU: scf.forall (%{{.*}}) = (0) to (64) step (8)
// GPU: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// GPU: arith.truncf
// GPU: mapping = [#gpu.block<linear_dim_0>]
// GPU-NOT: scf.forall
// GPU: return
#wk = affine_map<(n, k) -> (n, k)>
#xk = affine_map<(n, k) -> (k)>
#yn = affine_map<(n, k) -> (n)>
func.func @gemv_rounded(%w: tensor<64x128xbf16>, %x: tensor<128xbf16>, %acc: tensor<64xf32>) -> tensor<64xbf16> {
  %y = linalg.generic {indexing_maps = [#wk, #xk, #yn], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [8, 0], reduction = [0, 0], vector = [0, 0]>} ins(%w, %x : tensor<64x128xbf16>, tensor<128xbf16>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#all, #all], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [8], reduction = [0], vector = [0]>} ins(%y : tensor<64xf32>) outs(%e : tensor<64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64xbf16>
  return %r : tensor<64xbf16>
}

// With max-fused-tile-bytes (a GPU's shared memory per block) a producer
// whose tile may hold more stays out of the region: the scaled input of a
// product tiled 64 rows at a time (64 x 4096 bf16, 512 KiB) is a region of
// its own, while one row of it (8 KiB) joins a tile of one row.
// LIMIT-LABEL: func.func @scaled_product(
// LIMIT: scf.forall
// LIMIT: arith.mulf
// LIMIT: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 64) step (64, 64)
// LIMIT-NOT: arith.mulf %{{.*}}, %cst
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: arith.truncf
// LIMIT-LABEL: func.func @scaled_product_row(
// LIMIT: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (128, 64) step (1, 64)
// LIMIT: arith.mulf %{{.*}}, %cst
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: arith.truncf
// LIMIT-NOT: scf.forall (
// LIMIT: return
#sk2 = affine_map<(s, k) -> (s, k)>
#x3 = affine_map<(s, n, k) -> (s, k)>
#w3 = affine_map<(s, n, k) -> (n, k)>
#y3 = affine_map<(s, n, k) -> (s, n)>
#sn2 = affine_map<(s, n) -> (s, n)>
func.func @scaled_product(%x: tensor<128x4096xbf16>, %w: tensor<64x4096xbf16>, %acc: tensor<128x64xf32>) -> tensor<128x64xbf16> {
  %two = arith.constant 2.0 : bf16
  %e = tensor.empty() : tensor<128x4096xbf16>
  %scaled = linalg.generic {indexing_maps = [#sk2, #sk2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<128x4096xbf16>) outs(%e : tensor<128x4096xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %two : bf16
    linalg.yield %m : bf16
  } -> tensor<128x4096xbf16>
  %p = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [64, 64, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%scaled, %w : tensor<128x4096xbf16>, tensor<64x4096xbf16>) outs(%acc : tensor<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %eb = tensor.empty() : tensor<128x64xbf16>
  %r = linalg.generic {indexing_maps = [#sn2, #sn2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [64, 64], reduction = [0, 0], vector = [0, 0]>} ins(%p : tensor<128x64xf32>) outs(%eb : tensor<128x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x64xbf16>
  return %r : tensor<128x64xbf16>
}

func.func @scaled_product_row(%x: tensor<128x4096xbf16>, %w: tensor<64x4096xbf16>, %acc: tensor<128x64xf32>) -> tensor<128x64xbf16> {
  %two = arith.constant 2.0 : bf16
  %e = tensor.empty() : tensor<128x4096xbf16>
  %scaled = linalg.generic {indexing_maps = [#sk2, #sk2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<128x4096xbf16>) outs(%e : tensor<128x4096xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.mulf %a, %two : bf16
    linalg.yield %m : bf16
  } -> tensor<128x4096xbf16>
  %p = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 64, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%scaled, %w : tensor<128x4096xbf16>, tensor<64x4096xbf16>) outs(%acc : tensor<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %eb = tensor.empty() : tensor<128x64xbf16>
  %r = linalg.generic {indexing_maps = [#sn2, #sn2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 64], reduction = [0, 0], vector = [0, 0]>} ins(%p : tensor<128x64xf32>) outs(%eb : tensor<128x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<128x64xbf16>
  return %r : tensor<128x64xbf16>
}

// A product whose sums a target keeps in registers
// (`linnet.result_in_registers`: a GPU's tensor cores, whose sums go
// through their reader from the accumulators) joins its reader's region
// with its fill whatever the limit (a 128 x 128 f32 tile is 64 KiB, past
// 32); unmarked, it stays a region of its own.
// LIMIT-LABEL: func.func @sums_in_registers(
// LIMIT: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (256, 256) step (128, 128)
// LIMIT: linalg.fill
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: arith.truncf
// LIMIT-NOT: scf.forall (
// LIMIT: return
// LIMIT-LABEL: func.func @sums_unmarked(
// LIMIT: scf.forall
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: scf.forall
// LIMIT-NOT: linalg.generic {{.*}}"reduction"
// LIMIT: arith.truncf
// Nor does a marked product whose reader reads another (a gate's SiLU times
// an up projection): only one product's sums go through a reader.
// LIMIT-LABEL: func.func @two_marked_sums(
// LIMIT: scf.forall
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: scf.forall
// LIMIT: linalg.generic {{.*}}"reduction"
// LIMIT: scf.forall
// LIMIT-NOT: linalg.generic {{.*}}"reduction"
// LIMIT: arith.mulf
func.func @sums_in_registers(%x: tensor<256x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<256x256xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %p = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>, linnet.result_in_registers} ins(%x, %w : tensor<256x64xbf16>, tensor<256x64xbf16>) outs(%f : tensor<256x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  %eb = tensor.empty() : tensor<256x256xbf16>
  %r = linalg.generic {indexing_maps = [#sn2, #sn2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128], reduction = [0, 0], vector = [0, 0]>} ins(%p : tensor<256x256xf32>) outs(%eb : tensor<256x256xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x256xbf16>
  return %r : tensor<256x256xbf16>
}

func.func @sums_unmarked(%x: tensor<256x64xbf16>, %w: tensor<256x64xbf16>) -> tensor<256x256xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %p = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%x, %w : tensor<256x64xbf16>, tensor<256x64xbf16>) outs(%f : tensor<256x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  %eb = tensor.empty() : tensor<256x256xbf16>
  %r = linalg.generic {indexing_maps = [#sn2, #sn2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128], reduction = [0, 0], vector = [0, 0]>} ins(%p : tensor<256x256xf32>) outs(%eb : tensor<256x256xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x256xbf16>
  return %r : tensor<256x256xbf16>
}

func.func @two_marked_sums(%x: tensor<256x64xbf16>, %w: tensor<256x64xbf16>, %v: tensor<256x64xbf16>) -> tensor<256x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %p = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>, linnet.result_in_registers} ins(%x, %w : tensor<256x64xbf16>, tensor<256x64xbf16>) outs(%f : tensor<256x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  %q = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>, linnet.result_in_registers} ins(%x, %v : tensor<256x64xbf16>, tensor<256x64xbf16>) outs(%f : tensor<256x256xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x256xf32>
  %r = linalg.generic {indexing_maps = [#sn2, #sn2, #sn2], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [128, 128], reduction = [0, 0], vector = [0, 0]>} ins(%p, %q : tensor<256x256xf32>, tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) {
  ^bb0(%g: f32, %u: f32, %o: f32):
    %t = arith.mulf %g, %u : f32
    linalg.yield %t : f32
  } -> tensor<256x256xf32>
  return %r : tensor<256x256xf32>
}

// With fuse-reductions a reduction joins a region only where the tiles that
// read the same part of it (and so each compute it whole again) spend at
// most 2^23 iterations on it: a norm's sum of 2048 squares under each of
// 8192 tiles of a GEMV's rounding (2^24) is a region of its own, under each
// of 8 tiles (2^14) it joins. The scaling that reads it joins either way.
// (Canonicalization then drops the producers' originals, left without users.)
// RECOMPUTE-LABEL: func.func @norm_into_gemv(
// RECOMPUTE: scf.forall (%{{.*}}) in (1)
// RECOMPUTE: arith.mulf %[[IN:.*]], %[[IN]] : f32
// RECOMPUTE: scf.forall (%{{.*}}, %{{.*}}) in (1, 8192)
// RECOMPUTE-NOT: arith.mulf %[[IN2:.*]], %[[IN2]] : f32
// RECOMPUTE: arith.divf
// RECOMPUTE: "reduction"
// RECOMPUTE: arith.truncf
// RECOMPUTE-LABEL: func.func @norm_into_gemv_wide(
// RECOMPUTE: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 64) step (1, 8)
// RECOMPUTE: arith.mulf %[[IN3:.*]], %[[IN3]] : f32
// RECOMPUTE: arith.divf
// RECOMPUTE: "reduction"
// RECOMPUTE: arith.truncf
// RECOMPUTE-NOT: scf.forall (
// RECOMPUTE: return
#rk1 = affine_map<(r, k) -> (r, k)>
#r1 = affine_map<(r, k) -> (r)>
#x4 = affine_map<(r, n, k) -> (r, k)>
#w4 = affine_map<(r, n, k) -> (n, k)>
#y4 = affine_map<(r, n, k) -> (r, n)>
#rn1 = affine_map<(r, n) -> (r, n)>
func.func @norm_into_gemv(%x: tensor<1x2048xf32>, %w: tensor<8192x2048xf32>, %acc0: tensor<1xf32>, %acc: tensor<1x8192xf32>) -> tensor<1x8192xbf16> {
  %ss = linalg.generic {indexing_maps = [#rk1, #r1], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<1x2048xf32>) outs(%acc0 : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %e = tensor.empty() : tensor<1x2048xf32>
  %xn = linalg.generic {indexing_maps = [#rk1, #r1, #rk1], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%x, %ss : tensor<1x2048xf32>, tensor<1xf32>) outs(%e : tensor<1x2048xf32>) {
  ^bb0(%a: f32, %n: f32, %o: f32):
    %q = arith.divf %a, %n : f32
    linalg.yield %q : f32
  } -> tensor<1x2048xf32>
  %y = linalg.generic {indexing_maps = [#x4, #w4, #y4], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%xn, %w : tensor<1x2048xf32>, tensor<8192x2048xf32>) outs(%acc : tensor<1x8192xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8192xf32>
  %eb = tensor.empty() : tensor<1x8192xbf16>
  %r = linalg.generic {indexing_maps = [#rn1, #rn1], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1], reduction = [0, 0], vector = [0, 0]>} ins(%y : tensor<1x8192xf32>) outs(%eb : tensor<1x8192xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x8192xbf16>
  return %r : tensor<1x8192xbf16>
}

func.func @norm_into_gemv_wide(%x: tensor<1x2048xf32>, %w: tensor<64x2048xf32>, %acc0: tensor<1xf32>, %acc: tensor<1x64xf32>) -> tensor<1x64xbf16> {
  %ss = linalg.generic {indexing_maps = [#rk1, #r1], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<1x2048xf32>) outs(%acc0 : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %e = tensor.empty() : tensor<1x2048xf32>
  %xn = linalg.generic {indexing_maps = [#rk1, #r1, #rk1], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 256], reduction = [0, 0], vector = [0, 0]>} ins(%x, %ss : tensor<1x2048xf32>, tensor<1xf32>) outs(%e : tensor<1x2048xf32>) {
  ^bb0(%a: f32, %n: f32, %o: f32):
    %q = arith.divf %a, %n : f32
    linalg.yield %q : f32
  } -> tensor<1x2048xf32>
  %y = linalg.generic {indexing_maps = [#x4, #w4, #y4], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 8, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%xn, %w : tensor<1x2048xf32>, tensor<64x2048xf32>) outs(%acc : tensor<1x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x64xf32>
  %eb = tensor.empty() : tensor<1x64xbf16>
  %r = linalg.generic {indexing_maps = [#rn1, #rn1], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 8], reduction = [0, 0], vector = [0, 0]>} ins(%y : tensor<1x64xf32>) outs(%eb : tensor<1x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x64xbf16>
  return %r : tensor<1x64xbf16>
}

// With fuse-reductions a reduction joins a region only where a block then
// computes no more of its outputs than one of its own tiles does: a GEMV of
// 8 outputs a block stays out of a region that reads its 256 outputs whole
// (a router's logits under a softmax's row), which would read all its
// weights in one block; under a tile of 8 it joins.
// GPU-LABEL: func.func @gemv_under_row(
// GPU: scf.forall (%{{.*}}) = (0) to (256) step (8)
// GPU: "reduction"
// GPU: mapping = [#gpu.block<linear_dim_0>]
// GPU: scf.forall (%{{.*}}) = (0) to (256) step (256)
// GPU-NOT: "reduction"
// GPU: math.exp
// GPU: return
#nk5 = affine_map<(n, k) -> (n, k)>
#k5 = affine_map<(n, k) -> (k)>
#n5 = affine_map<(n, k) -> (n)>
#n6 = affine_map<(n) -> (n)>
func.func @gemv_under_row(%w: tensor<256x512xf32>, %x: tensor<512xf32>, %acc: tensor<256xf32>) -> tensor<256xf32> {
  %y = linalg.generic {indexing_maps = [#nk5, #k5, #n5], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [8, 0], reduction = [0, 0], vector = [0, 0]>} ins(%w, %x : tensor<256x512xf32>, tensor<512xf32>) outs(%acc : tensor<256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %e = tensor.empty() : tensor<256xf32>
  %r = linalg.generic {indexing_maps = [#n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [256], reduction = [0], vector = [0]>} ins(%y : tensor<256xf32>) outs(%e : tensor<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// An elementwise op of inputs in memory that two regions read (a block's
// residual sum, read by the next norm and by the block's last sum) is
// computed again in each, not a region of its own.
// CHECK-LABEL: func.func @shared_residual(
// CHECK-NOT: scf.forall (
// CHECK: scf.forall
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: scf.forall
// CHECK: arith.addf
// CHECK: arith.subf
// CHECK-NOT: scf.forall (
// CHECK: return
func.func @shared_residual(%x: tensor<64xf32>, %y: tensor<64xf32>, %z: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %h = linalg.generic {indexing_maps = [#n6, #n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [16], reduction = [0], vector = [0]>} ins(%x, %y : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %m = linalg.generic {indexing_maps = [#n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [16], reduction = [0], vector = [0]>} ins(%h : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %d = linalg.generic {indexing_maps = [#n6, #n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [16], reduction = [0], vector = [0]>} ins(%h, %z : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %m, %d : tensor<64xf32>, tensor<64xf32>
}

// A producer a target keeps apart (`linnet.own_region`: on a GPU one
// computing a cosine) is a region of its own, not fused into its reader's.
// CHECK-LABEL: func.func @own_region(
// CHECK: scf.forall
// CHECK: math.cos
// CHECK: scf.forall
// CHECK-NOT: math.cos
// CHECK: arith.mulf
// CHECK: return
func.func @own_region(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [16], reduction = [0], vector = [0]>, linnet.own_region} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.cos %a : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#n6, #n6, #n6], iterator_types = ["parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [16], reduction = [0], vector = [0]>} ins(%x, %c : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// A lowered region (one head a block, as a delta rule's) reads a head of a
// scaled tensor and of a norm's sum: both join it, the sum computed for its
// head alone. A producer another op outside reads too (the exp, which the
// function returns) joins it as well, small enough (64 iterations) to be
// computed again, and is a region of its own for the return.
// INTO-LABEL: func.func @into_lowered(
// INTO: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 16) step (1, 16)
// INTO: math.exp
// INTO: scf.forall (%[[H:.*]]) in (4)
// INTO: tensor.extract_slice %arg0[%[[H]], 0] [1, 16]
// INTO: arith.mulf
// INTO: "reduction"
// INTO: math.exp
// INTO: arith.divf
// INTO: mapping = [#gpu.block<linear_dim_0>]
// INTO-NOT: scf.forall (
// INTO: return
#hk = affine_map<(h, k) -> (h, k)>
#h = affine_map<(h, k) -> (h)>
func.func @into_lowered(%x: tensor<4x16xf32>, %acc: tensor<4xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %two = arith.constant 2.0 : f32
  %scaled = linalg.generic {indexing_maps = [#hk, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %sums = linalg.generic {indexing_maps = [#hk, #h], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x16xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#hk, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%scaled : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  %r = scf.forall (%hd) in (4) shared_outs(%out = %e) -> (tensor<4x16xf32>) {
    %xs = tensor.extract_slice %scaled[%hd, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %ss = tensor.extract_slice %sums[%hd] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %es = tensor.extract_slice %exp[%hd, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %os = tensor.extract_slice %out[%hd, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %q = linalg.generic {indexing_maps = [affine_map<(h, k) -> (h, k)>, affine_map<(h, k) -> (h)>, affine_map<(h, k) -> (h, k)>, affine_map<(h, k) -> (h, k)>], iterator_types = ["parallel", "parallel"]} ins(%xs, %ss, %es : tensor<1x16xf32>, tensor<1xf32>, tensor<1x16xf32>) outs(%os : tensor<1x16xf32>) {
    ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
      %d = arith.divf %a, %b : f32
      %t = arith.addf %d, %c : f32
      linalg.yield %t : f32
    } -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %q into %out[%hd, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
    }
  } {mapping = [#gpu.block<linear_dim_0>]}
  return %r, %exp : tensor<4x16xf32>, tensor<4x16xf32>
}

// The same region reading an exp (of a product, not of memory) of a
// run-time width, of no bound to be computed again while the function
// returns it too: the exp stays a region of its own, which the lowered
// region reads.
// INTO-LABEL: func.func @into_lowered_wide(
// INTO: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, %{{.*}}) step (1, 16)
// INTO: math.exp
// INTO: scf.forall (%[[H:.*]]) in (4)
// INTO-NOT: math.exp
// INTO: arith.addf
// INTO: mapping = [#gpu.block<linear_dim_0>]
// INTO: return
func.func @into_lowered_wide(%x: tensor<4x?xf32>) -> (tensor<4x16xf32>, tensor<4x?xf32>) {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<4x?xf32>
  %ew = tensor.empty(%n) : tensor<4x?xf32>
  %two = arith.constant 2.0 : f32
  %scaled = linalg.generic {indexing_maps = [#hk, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<4x?xf32>) outs(%ew : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<4x?xf32>
  %exp = linalg.generic {indexing_maps = [#hk, #hk], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%scaled : tensor<4x?xf32>) outs(%ew : tensor<4x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.exp %a : f32
    linalg.yield %m : f32
  } -> tensor<4x?xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %r = scf.forall (%hd) in (4) shared_outs(%out = %e) -> (tensor<4x16xf32>) {
    %es = tensor.extract_slice %exp[%hd, 0] [1, 16] [1, 1] : tensor<4x?xf32> to tensor<1x16xf32>
    %os = tensor.extract_slice %out[%hd, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %q = linalg.generic {indexing_maps = [affine_map<(h, k) -> (h, k)>, affine_map<(h, k) -> (h, k)>], iterator_types = ["parallel", "parallel"]} ins(%es : tensor<1x16xf32>) outs(%os : tensor<1x16xf32>) {
    ^bb0(%a: f32, %o: f32):
      %t = arith.addf %a, %a : f32
      linalg.yield %t : f32
    } -> tensor<1x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %q into %out[%hd, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<4x16xf32>
    }
  } {mapping = [#gpu.block<linear_dim_0>]}
  return %r, %exp : tensor<4x16xf32>, tensor<4x?xf32>
}

// A small op (here a row's sum of squares and its scaling, 2 x 64
// iterations; a decode step's norm) that two regions read is computed again
// in each, though it is no elementwise op of memory: neither is a region of
// its own.
// GPU-LABEL: func.func @shared_norm(
// GPU-NOT: scf.forall (
// GPU: scf.forall
// GPU: "reduction"
// GPU: arith.mulf
// GPU: math.exp
// GPU: scf.forall
// GPU: "reduction"
// GPU: arith.mulf
// GPU: math.log
// GPU-NOT: scf.forall (
// GPU: return
#sum_in = affine_map<(r, n) -> (r, n)>
#sum_out = affine_map<(r, n) -> (r)>
func.func @shared_norm(%x: tensor<1x64xf32>) -> (tensor<1x64xf32>, tensor<1x64xf32>) {
  %acc0 = tensor.empty() : tensor<1xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [1], reduction = [0], vector = [0]>} ins(%zero : f32) outs(%acc0 : tensor<1xf32>) -> tensor<1xf32>
  %ss = linalg.generic {indexing_maps = [#sum_in, #sum_out], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [0, 0], vector = [0, 0]>} ins(%x : tensor<1x64xf32>) outs(%acc : tensor<1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %a : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  %e = tensor.empty() : tensor<1x64xf32>
  %n = linalg.generic {indexing_maps = [#sum_in, #sum_out, #sum_in], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%x, %ss : tensor<1x64xf32>, tensor<1xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<1x64xf32>
  %u = linalg.generic {indexing_maps = [#sum_in, #sum_in], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%n : tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<1x64xf32>
  %v = linalg.generic {indexing_maps = [#sum_in, #sum_in], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 16], reduction = [0, 0], vector = [0, 0]>} ins(%n : tensor<1x64xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.log %a : f32
    linalg.yield %t : f32
  } -> tensor<1x64xf32>
  return %u, %v : tensor<1x64xf32>, tensor<1x64xf32>
}

// A lowered region that reads one element of a producer (a routed expert's
// id, `tensor.extract`) reads it from a slice of that element, and the
// producer (a reduction over a row) joins the region; so does one it reads
// through a reshape that only drops a unit axis (the expert's input row).
// INTO-LABEL: func.func @into_lowered_element(
// INTO: scf.forall (%[[E:.*]]) in (2)
// INTO: "reduction"
// INTO: tensor.extract %{{.*}}[%{{.*}}] : tensor<1xi32>
// INTO: arith.negf
// INTO: mapping = [#gpu.block<linear_dim_0>]
// INTO-NOT: scf.forall (
// INTO: return
#ids_in = affine_map<(k, i) -> (k, i)>
#ids_out = affine_map<(k, i) -> (k)>
#row3 = affine_map<(u, v, n) -> (u, v, n)>
func.func @into_lowered_element(%onehot: tensor<2x8xi32>, %x: tensor<1x1x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %ids0 = tensor.empty() : tensor<2xi32>
  %c0_i32 = arith.constant 0 : i32
  %acc = linalg.fill {linnet.lowering_config = #linnet.lowering_config<thread = [2], reduction = [0], vector = [0]>} ins(%c0_i32 : i32) outs(%ids0 : tensor<2xi32>) -> tensor<2xi32>
  %ids = linalg.generic {indexing_maps = [#ids_in, #ids_out], iterator_types = ["parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [2, 0], reduction = [0, 0], vector = [0, 0]>} ins(%onehot : tensor<2x8xi32>) outs(%acc : tensor<2xi32>) {
  ^bb0(%a: i32, %o: i32):
    %s = arith.addi %o, %a : i32
    linalg.yield %s : i32
  } -> tensor<2xi32>
  %en = tensor.empty() : tensor<1x1x16xf32>
  %neg = linalg.generic {indexing_maps = [#row3, #row3], iterator_types = ["parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 16], reduction = [0, 0, 0], vector = [0, 0, 0]>} ins(%x : tensor<1x1x16xf32>) outs(%en : tensor<1x1x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<1x1x16xf32>
  %flat = tensor.collapse_shape %neg [[0, 1], [2]] : tensor<1x1x16xf32> into tensor<1x16xf32>
  %e = tensor.empty() : tensor<2x16xf32>
  %r = scf.forall (%k) in (2) shared_outs(%out = %e) -> (tensor<2x16xf32>) {
    %id = tensor.extract %ids[%k] : tensor<2xi32>
    %row = arith.index_cast %id : i32 to index
    %ws = tensor.extract_slice %w[%row, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
    %xs = tensor.extract_slice %flat[0, 0] [1, 16] [1, 1] : tensor<1x16xf32> to tensor<16xf32>
    %os = tensor.extract_slice %out[%k, 0] [1, 16] [1, 1] : tensor<2x16xf32> to tensor<16xf32>
    %q = linalg.generic {indexing_maps = [#n6, #n6, #n6], iterator_types = ["parallel"]} ins(%ws, %xs : tensor<16xf32>, tensor<16xf32>) outs(%os : tensor<16xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %t = arith.mulf %a, %b : f32
      linalg.yield %t : f32
    } -> tensor<16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %q into %out[%k, 0] [1, 16] [1, 1] : tensor<16xf32> into tensor<2x16xf32>
    }
  } {mapping = [#gpu.block<linear_dim_0>]}
  return %r : tensor<2x16xf32>
}

// A prompt's delta rule, tiled as an op with its tokens whole: its scaled
// query's tile ([1, S, 1, 8], of a run-time S) has no bound, and the scan,
// no linalg op, would hold it in a buffer of its own, so with
// max-fused-tile-bytes it is a region of its own; without, it joins.
// LIMIT-LABEL: func.func @prompt_scan(
// LIMIT: scf.forall
// LIMIT: arith.mulf
// LIMIT: scf.forall
// LIMIT-NOT: arith.mulf
// LIMIT: linnet.delta_rule
// GPU-LABEL: func.func @prompt_scan(
// GPU: scf.forall
// GPU: arith.mulf
// GPU: linnet.delta_rule
// GPU-NOT: scf.forall (
// GPU: return
#q4 = affine_map<(b, s, n, k) -> (b, s, n, k)>
func.func @prompt_scan(%q: tensor<2x?x4x8xf32>, %v: tensor<2x?x4x16xf32>,
                       %g: tensor<2x?x4xf32>, %init: tensor<2x4x8x16xf32>,
                       %len: tensor<2xi32>) -> (tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>) {
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %s = tensor.dim %q, %c1 : tensor<2x?x4x8xf32>
  %eq = tensor.empty(%s) : tensor<2x?x4x8xf32>
  %scaled = linalg.generic {indexing_maps = [#q4, #q4], iterator_types = ["parallel", "parallel", "parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 1, 8], reduction = [0, 0, 0, 0], vector = [0, 0, 0, 0]>} ins(%q : tensor<2x?x4x8xf32>) outs(%eq : tensor<2x?x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  } -> tensor<2x?x4x8xf32>
  %e = tensor.empty(%s) : tensor<2x?x4x16xf32>
  %out, %final = linnet.delta_rule %scaled, %scaled, %v, %g, %g, %len outs(%e, %init)
      {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4x16xf32>, tensor<2x?x4xf32>,
         tensor<2x?x4xf32>, tensor<2xi32>, tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>)
      -> (tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>)
  return %out, %final : tensor<2x?x4x16xf32>, tensor<2x4x8x16xf32>
}

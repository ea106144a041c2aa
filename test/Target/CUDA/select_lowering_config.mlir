// linnet-cuda-select-lowering-config alone: a block's tile (the `thread`
// level) takes up to threads-per-block parallel iterations, innermost loop
// first, one thread each; reductions stay whole. A warp reduction (an input
// laid out along the reduced axis, none read along it laid out along
// another) takes an output per warp. A pinned configuration is kept. An op
// tiled as an op gets a tile only where its shapes are static, but for a
// prompt's delta rule; with special-ops-only, nothing else gets one.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-select-lowering-config))" | FileCheck %s
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-select-lowering-config{threads-per-block=64}))" | FileCheck %s --check-prefix=SMALL
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-select-lowering-config{special-ops-only=true}))" | FileCheck %s --check-prefix=SPECIAL

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @ops
// CHECK: linalg.generic {{.*}}thread = [1, 256], reduction = [0, 0], vector = [0, 0]
// CHECK: linalg.generic {{.*}}thread = [64, 4], reduction = [0, 0], vector = [0, 0]
// CHECK: linalg.generic {{.*}}thread = [8, 0], reduction = [0, 0], vector = [0, 0]
// CHECK: linalg.matmul {{.*}}thread = [1, 256, 0], reduction = [0, 0, 0], vector = [0, 0, 0]
// CHECK: linalg.generic {{.*}}thread = [1, 8, 0], reduction = [0, 0, 0], vector = [0, 0, 0]
// CHECK: linalg.generic {{.*}}thread = [2, 2], reduction = [0, 0], vector = [0, 0]
// SMALL-LABEL: func.func @ops
// SMALL: thread = [1, 64]
// SMALL: thread = [16, 4]
// SMALL: thread = [2, 0]
// SMALL: thread = [1, 64, 0]
// SMALL: thread = [1, 2, 0]
#xk = affine_map<(m, n, k) -> (m, k)>
#wk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @ops(%x: tensor<?x512xf32>, %n: tensor<?x4xf32>, %a: tensor<64x128xf32>, %b: tensor<128x512xf32>, %c: tensor<64x512xf32>, %w: tensor<512x128xbf16>)
    -> (tensor<?x512xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<64x512xf32>, tensor<64x512xf32>, tensor<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x512xf32>
  %e = tensor.empty(%rows) : tensor<?x512xf32>
  // Elementwise: 256 of the 512 columns of a row.
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x512xf32>) outs(%e : tensor<?x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<?x512xf32>
  // A row of 4: 64 rows of it.
  %nrows = tensor.dim %n, %c0 : tensor<?x4xf32>
  %en = tensor.empty(%nrows) : tensor<?x4xf32>
  %narrow = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n : tensor<?x4xf32>) outs(%en : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  // A row sum: a warp reduction, 8 rows of it (a warp each).
  %es = tensor.empty(%rows) : tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x512xf32>) outs(%es : tensor<?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  // A matmul: its [K, N] operand is laid out along N, so 256 outputs of a
  // row, each a whole dot product of one thread.
  %mm = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x512xf32>) outs(%c : tensor<64x512xf32>) -> tensor<64x512xf32>
  // A linear layer's [Out, In] weight is laid out along the reduced In: a
  // warp reduction, 8 outputs of a row.
  %lin = linalg.generic {indexing_maps = [#xk, #wk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<64x128xf32>, tensor<512x128xbf16>) outs(%c : tensor<64x512xf32>) {
  ^bb0(%u: f32, %v: bf16, %o: f32):
    %vf = arith.extf %v : bf16 to f32
    %p = arith.mulf %u, %vf : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<64x512xf32>
  %pinned = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"],
      linnet.lowering_config = #linnet.lowering_config<thread = [2, 2], reduction = [0, 0], vector = [0, 0]>}
      ins(%x : tensor<?x512xf32>) outs(%e : tensor<?x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<?x512xf32>
  return %neg, %narrow, %sum, %mm, %lin, %pinned : tensor<?x512xf32>, tensor<?x4xf32>, tensor<?xf32>, tensor<64x512xf32>, tensor<64x512xf32>, tensor<?x512xf32>
}

// Every delta rule is tiled as an op, a row, a head and a value column
// each 8 lanes of a block (32 at 256 threads, 8 at 64), at most the head's
// 8 here, each column's scan its lanes' (WarpScan.h): a decode step's
// (every shape static) and a prefill's (a dynamic sequence). With special-ops-only (the pipeline's first
// selection) the delta rules are all that get one.
// SPECIAL-LABEL: func.func @delta_rules
// SPECIAL: linnet.delta_rule {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>
// SPECIAL-SAME: -> (tensor<2x1x4x8xf32>, tensor<2x4x8x8xf32>)
// SPECIAL: linnet.delta_rule {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>
// SPECIAL-LABEL: func.func @consumers
// SPECIAL-NOT: lowering_config
// CHECK-LABEL: func.func @delta_rules
// CHECK: linnet.delta_rule {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>
// CHECK: linnet.delta_rule {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 8], reduction = [0, 0, 0], vector = [0, 0, 0]>
// CHECK-SAME: -> (tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>)
// SMALL-LABEL: func.func @delta_rules
// SMALL: thread = [1, 1, 8]
// SMALL: thread = [1, 1, 8]
func.func @delta_rules(%q: tensor<2x1x4x8xf32>, %b: tensor<2x1x4xf32>, %e: tensor<2x1x4x8xf32>,
                       %qs: tensor<2x?x4x8xf32>, %bs: tensor<2x?x4xf32>, %es: tensor<2x?x4x8xf32>,
                       %init: tensor<2x4x8x8xf32>, %len: tensor<2xi32>)
    -> (tensor<2x1x4x8xf32>, tensor<2x?x4x8xf32>) {
  %o, %f = linnet.delta_rule %q, %q, %q, %b, %b, %len outs(%e, %init)
      : (tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4x8xf32>, tensor<2x1x4xf32>, tensor<2x1x4xf32>, tensor<2xi32>, tensor<2x1x4x8xf32>, tensor<2x4x8x8xf32>)
      -> (tensor<2x1x4x8xf32>, tensor<2x4x8x8xf32>)
  %os, %fs = linnet.delta_rule %qs, %qs, %qs, %bs, %bs, %len outs(%es, %init)
      : (tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4x8xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<2xi32>, tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>)
      -> (tensor<2x?x4x8xf32>, tensor<2x4x8x8xf32>)
  return %o, %os : tensor<2x1x4x8xf32>, tensor<2x?x4x8xf32>
}

// The rounding of a GEMV's f32 sums (the GEMV's only user, element for
// element) takes the GEMV's tile, an output per warp, so that the GEMV joins
// its region; a row's scale broadcast over the row keeps its own tile.
// CHECK-LABEL: func.func @consumers
// CHECK: iterator_types = ["parallel", "reduction"]} ins({{.*}}thread = [8, 0]
// CHECK: iterator_types = ["parallel"]} ins({{.*}}thread = [8],
// CHECK: iterator_types = ["parallel", "reduction"]} ins({{.*}}thread = [8, 0]
// CHECK: iterator_types = ["parallel", "parallel"]} ins({{.*}}thread = [1, 256]
// SMALL-LABEL: func.func @consumers
// SMALL: thread = [2, 0]
// SMALL: thread = [2],
// SMALL: thread = [2, 0]
// SMALL: thread = [1, 64]
#gk = affine_map<(n, k) -> (n, k)>
#gx = affine_map<(n, k) -> (k)>
#gn = affine_map<(n, k) -> (n)>
#one = affine_map<(n) -> (n)>
func.func @consumers(%w: tensor<64x512xbf16>, %x: tensor<512xbf16>, %acc: tensor<64xf32>, %rows: tensor<64x512xf32>) -> (tensor<64xbf16>, tensor<64x512xf32>) {
  %y = linalg.generic {indexing_maps = [#gk, #gx, #gn], iterator_types = ["parallel", "reduction"]} ins(%w, %x : tensor<64x512xbf16>, tensor<512xbf16>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%y : tensor<64xf32>) outs(%e : tensor<64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64xbf16>
  %sums = linalg.generic {indexing_maps = [#gk, #gn], iterator_types = ["parallel", "reduction"]} ins(%rows : tensor<64x512xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %es = tensor.empty() : tensor<64x512xf32>
  %scaled = linalg.generic {indexing_maps = [#gk, #gn, #gk], iterator_types = ["parallel", "parallel"]} ins(%rows, %sums : tensor<64x512xf32>, tensor<64xf32>) outs(%es : tensor<64x512xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<64x512xf32>
  return %r, %scaled : tensor<64xbf16>, tensor<64x512xf32>
}

// A residual sum that reads the rounding of a GEMV, element for element
// through a unit axis a reshape added (read through), takes the same tile in
// its own loops: the rounding and the GEMV join its region.
// CHECK-LABEL: func.func @residual_of_gemv
// CHECK: iterator_types = ["parallel", "reduction"]} ins({{.*}}thread = [8, 0]
// CHECK: iterator_types = ["parallel"]} ins({{.*}}thread = [8],
// CHECK: iterator_types = ["parallel", "parallel"]} ins({{.*}}thread = [1, 8]
// SMALL-LABEL: func.func @residual_of_gemv
// SMALL: thread = [2, 0]
// SMALL: thread = [2],
// SMALL: thread = [1, 2]
#unit_row = affine_map<(u, n) -> (n)>
#unit_id = affine_map<(u, n) -> (u, n)>
func.func @residual_of_gemv(%w: tensor<64x512xbf16>, %x: tensor<512xbf16>, %acc: tensor<64xf32>, %h: tensor<1x64xbf16>) -> tensor<1x64xbf16> {
  %y = linalg.generic {indexing_maps = [#gk, #gx, #gn], iterator_types = ["parallel", "reduction"]} ins(%w, %x : tensor<64x512xbf16>, tensor<512xbf16>) outs(%acc : tensor<64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%y : tensor<64xf32>) outs(%e : tensor<64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64xbf16>
  %eh = tensor.empty() : tensor<1x64xbf16>
  %sum = linalg.generic {indexing_maps = [#unit_id, #unit_row, #unit_id], iterator_types = ["parallel", "parallel"]} ins(%h, %r : tensor<1x64xbf16>, tensor<64xbf16>) outs(%eh : tensor<1x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %s = arith.addf %a, %b : bf16
    linalg.yield %s : bf16
  } -> tensor<1x64xbf16>
  return %sum : tensor<1x64xbf16>
}

// An op computing a cosine is a region of its own (`linnet.own_region`):
// libdevice's argument reduction keeps its local array in registers only in
// a kernel of that loop alone. The op reading it is not marked.
// CHECK-LABEL: func.func @cosine_apart
// CHECK: linnet.lowering_config = {{.*}}, linnet.own_region}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.cos
// CHECK-NOT: linnet.own_region
// CHECK: return
func.func @cosine_apart(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.cos %a : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#one, #one, #one], iterator_types = ["parallel"]} ins(%x, %c : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

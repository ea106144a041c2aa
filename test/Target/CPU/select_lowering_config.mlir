// linnet-cpu-select-lowering-config alone: the CPU's tile sizes. A matmul:
// a 64x256 thread tile, k in blocks of 256, an 8x16 register tile (clamped
// to small dimensions). A matmul whose operands both run along k (the weight
// transposed, as std.nn.linear reads it): threads split rows and columns
// (about 16 column tiles, multiples of 8, of at least 32768 multiply-adds
// per row), a register tile of 4 rows by 4 columns of 16 lanes along k; for a
// single row (a decode GEMV) one output at a time with 32 lanes. An elementwise op: 32 lanes along its
// innermost loop, its outer loop in about 16 thread tiles of at least 4096
// elements; one too small for two such tiles (a decode's row) gets none. A
// pinned configuration is kept.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-select-lowering-config))" | FileCheck %s
// The dot products' register tile is an option of the pass (rows, columns,
// lanes) and of the whole pipeline, which hands it on:
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-select-lowering-config{dot-product-register-tile=2,8,32}))" | FileCheck %s --check-prefix=TILE
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg dot-product-register-tile=2,8,32" | FileCheck %s --check-prefix=PIPELINE
// TILE-LABEL: func.func @linear(
// TILE: vector = [2, 8, 32]
// TILE-LABEL: func.func @linear_one_row
// TILE: vector = [1, 1, 32]
// PIPELINE-LABEL: func.func @linear(
// PIPELINE: vector.fma {{.*}} : vector<2x8x32xf32>
// With bf16-dot-products (a CPU that multiplies bf16 pairs in one
// instruction) a dot product of bf16 operands gets twice the lanes along k;
// one of f32 operands keeps its own:
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cpu-select-lowering-config{bf16-dot-products=true}))" | FileCheck %s --check-prefix=PAIRED
// PAIRED-LABEL: func.func @linear(
// PAIRED: vector = [4, 4, 16]
// PAIRED-LABEL: func.func @linear_one_row
// PAIRED: vector = [1, 1, 32]
// PAIRED-LABEL: func.func @linear_bf16
// PAIRED: vector = [4, 4, 32]

// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul {linnet.lowering_config = #linnet.lowering_config<thread = [64, 256, 0], reduction = [0, 0, 256], vector = [8, 16, 1]>}
func.func @matmul(%a: tensor<?x512xf32>, %b: tensor<512x1024xf32>, %c: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<?x512xf32>, tensor<512x1024xf32>) outs(%c : tensor<?x1024xf32>) -> tensor<?x1024xf32>
  return %r : tensor<?x1024xf32>
}

#a = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @linear
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [64, 256, 0], reduction = [0, 0, 0], vector = [4, 4, 16]>
func.func @linear(%x: tensor<?x256xf32>, %w: tensor<4096x256xf32>, %acc: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %r = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x256xf32>, tensor<4096x256xf32>) outs(%acc : tensor<?x4096xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4096xf32>
  return %r : tensor<?x4096xf32>
}

// CHECK-LABEL: func.func @linear_one_row
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 256, 0], reduction = [0, 0, 0], vector = [1, 1, 32]>
func.func @linear_one_row(%x: tensor<1x256xf32>, %w: tensor<4096x256xf32>, %acc: tensor<1x4096xf32>) -> tensor<1x4096xf32> {
  %r = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x256xf32>, tensor<4096x256xf32>) outs(%acc : tensor<1x4096xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x4096xf32>
  return %r : tensor<1x4096xf32>
}

// CHECK-LABEL: func.func @linear_bf16
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [64, 256, 0], reduction = [0, 0, 0], vector = [4, 4, 16]>
func.func @linear_bf16(%x: tensor<?x256xbf16>, %w: tensor<4096x256xbf16>, %acc: tensor<?x4096xf32>) -> tensor<?x4096xf32> {
  %r = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x256xbf16>, tensor<4096x256xbf16>) outs(%acc : tensor<?x4096xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %in_0 : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4096xf32>
  return %r : tensor<?x4096xf32>
}

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [32, 0], reduction = [0, 0], vector = [1, 32]>
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [], vector = [1, 8]>
func.func @elementwise(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = math.exp %a : f32
    linalg.yield %n : f32
  } -> tensor<64x128xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], linnet.lowering_config = #linnet.lowering_config<thread = [1, 0], reduction = [], vector = [1, 8]>} ins(%r : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = math.exp %a : f32
    linalg.yield %n : f32
  } -> tensor<64x128xf32>
  return %p : tensor<64x128xf32>
}

// CHECK-LABEL: func.func @one_row
// CHECK: linalg.generic {{.*}}linnet.lowering_config = #linnet.lowering_config<thread = [0, 0], reduction = [0, 0], vector = [1, 32]>
func.func @one_row(%x: tensor<1x256xf32>) -> tensor<1x256xf32> {
  %e = tensor.empty() : tensor<1x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x256xf32>) outs(%e : tensor<1x256xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = math.exp %a : f32
    linalg.yield %n : f32
  } -> tensor<1x256xf32>
  return %r : tensor<1x256xf32>
}

// The ops tiled as ops: a row and a head per thread (the delta rule's value
// columns whole), where the op is work enough for two tiles; a decode step of
// a small state (1 x 1 x 4 heads x 8 x 8) gets no thread tile. A prefill's
// dynamic sequence counts as enough.
// CHECK-LABEL: func.func @special_ops
// CHECK: linnet.delta_rule {{.*}} {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>}
// CHECK: linnet.delta_rule {{.*}} {linnet.lowering_config = #linnet.lowering_config<thread = [0, 0, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>}
// CHECK: linnet.attention {{.*}} {linnet.lowering_config = #linnet.lowering_config<thread = [1, 1, 0], reduction = [0, 0, 0], vector = [0, 0, 0]>}
// The causal convolution: a row and a 16th of its 256 channels (whole
// vectors of 32) per thread.
// CHECK: linnet.causal_conv {{.*}} {linnet.lowering_config = #linnet.lowering_config<thread = [1, 32], reduction = [0, 0], vector = [0, 0]>}
func.func @special_ops(%q: tensor<1x?x4x8xf32>, %v: tensor<1x?x4x8xf32>, %b: tensor<1x?x4xf32>,
                       %init: tensor<1x4x8x8xf32>, %len: tensor<1xi32>,
                       %q1: tensor<1x1x4x8xf32>, %b1: tensor<1x1x4xf32>,
                       %aq: tensor<1x4x1x64xf32>, %ak: tensor<1x2x512x64xf32>, %off: tensor<1xi32>, %scale: f32,
                       %x: tensor<1x?x256xf32>, %taps: tensor<256x4xf32>, %hist: tensor<1x3x256xf32>)
    -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x1x64xf32>, tensor<1x?x256xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<1x?x4x8xf32>
  %e = tensor.empty(%s) : tensor<1x?x4x8xf32>
  %o, %f = linnet.delta_rule %q, %q, %v, %b, %b, %len outs(%e, %init)
      : (tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4x8xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>, tensor<1xi32>, tensor<1x?x4x8xf32>, tensor<1x4x8x8xf32>)
      -> (tensor<1x?x4x8xf32>, tensor<1x4x8x8xf32>)
  %e1 = tensor.empty() : tensor<1x1x4x8xf32>
  %o1, %f1 = linnet.delta_rule %q1, %q1, %q1, %b1, %b1, %len outs(%e1, %init)
      : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1xi32>, tensor<1x1x4x8xf32>, tensor<1x4x8x8xf32>)
      -> (tensor<1x1x4x8xf32>, tensor<1x4x8x8xf32>)
  %init_a = tensor.empty() : tensor<1x4x1x64xf32>
  %a = linnet.attention %aq, %ak, %ak, %off, %scale into %init_a
      : (tensor<1x4x1x64xf32>, tensor<1x2x512x64xf32>, tensor<1x2x512x64xf32>, tensor<1xi32>, f32, tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32>
  %y, %h = linnet.causal_conv %x, %taps, %hist, %len
      : (tensor<1x?x256xf32>, tensor<256x4xf32>, tensor<1x3x256xf32>, tensor<1xi32>)
      -> (tensor<1x?x256xf32>, tensor<1x3x256xf32>)
  return %f, %f1, %a, %y : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x1x64xf32>, tensor<1x?x256xf32>
}

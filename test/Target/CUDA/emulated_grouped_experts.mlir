// A prompt's routed experts on the emulated device: 200 rows of 64 (a
// run-time count) choose 2 of 4 experts of 128 outputs each, one choice in
// five naming none (-1: zeros). The slots take the grouped form (sorted by
// expert into tiles of 128 rows, TensorCoreMatmul.h's wide layout), and
// each tile's product stages its rows of A straight from the tokens' rows
// (a staged gather: no kernel copies the rows into sorted order first).
// Exact integers (inputs in {-1, 0, 1}, sums within bf16's exact range):
// numpy's product of the same formulas gives the checksum (sum of
// y[r, j, o] (r + 3 j + o) mod 7) and the elements checked.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s

// The kernel of the tiles' products reads the tokens' rows (200 x 64) with
// 16-byte loads at the rows the sort gives it, into the stages of A; no
// kernel before it copies them into sorted order (the sort's kernels read
// the choices only).
// GPU-LABEL: gpu.module @route_kernels
// GPU-NOT: memref<?x64xbf16>
// GPU: gpu.func @route_{{[0-9]+}}_generic(%{{.*}}: memref<?xi32>, %{{.*}}: memref<4x128x64xbf16>
// GPU: vector.load %{{.*}} : memref<?x64xbf16>, vector<8xbf16>
// GPU: nvgpu.mma.sync

// CHECK: -2580885
// CHECK-NEXT: 0
// CHECK-NEXT: 1
// CHECK-NEXT: -43
// CHECK-NEXT: -42
// CHECK-NEXT: 1

#rk = affine_map<(r, k) -> (r, k)>
#eok = affine_map<(e, o, k) -> (e, o, k)>
#rjo = affine_map<(r, j, o) -> (r, j, o)>
#sum = affine_map<(r, j, o) -> ()>

// x[r, k] = (r k + r + k) mod 3 - 1
func.func @tokens(%e: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %r = linalg.generic {indexing_maps = [#rk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x64xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %ik = arith.muli %i, %k : index
    %t0 = arith.addi %ik, %i : index
    %t = arith.addi %t0, %k : index
    %m = arith.remui %t, %c3 : index
    %c = arith.subi %m, %c1 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<?x64xbf16>
  return %r : tensor<?x64xbf16>
}

// w[e, o, k] = (o k + e k + o + e) mod 3 - 1
func.func @weights(%e: tensor<4x128x64xbf16>) -> tensor<4x128x64xbf16> {
  %r = linalg.generic {indexing_maps = [#eok], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<4x128x64xbf16>) {
  ^bb0(%o: bf16):
    %x = linalg.index 0 : index
    %n = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %nk = arith.muli %n, %k : index
    %xk = arith.muli %x, %k : index
    %t0 = arith.addi %nk, %xk : index
    %t1 = arith.addi %t0, %n : index
    %t = arith.addi %t1, %x : index
    %m = arith.remui %t, %c3 : index
    %c = arith.subi %m, %c1 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<4x128x64xbf16>
  return %r : tensor<4x128x64xbf16>
}

// id[r, j] = (7 r + 3 j) mod 5 - 1
func.func @choices(%e: tensor<?x2xi32>) -> tensor<?x2xi32> {
  %r = linalg.generic {indexing_maps = [#rk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x2xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %i7 = arith.muli %i, %c7 : index
    %j3 = arith.muli %j, %c3 : index
    %t = arith.addi %i7, %j3 : index
    %m = arith.remui %t, %c5 : index
    %c = arith.subi %m, %c1 : index
    %ci = arith.index_cast %c : index to i32
    linalg.yield %ci : i32
  } -> tensor<?x2xi32>
  return %r : tensor<?x2xi32>
}

func.func @route(%x: tensor<?x64xbf16>, %w: tensor<4x128x64xbf16>, %ids: tensor<?x2xi32>) -> tensor<?x2x128xf32> {
  %c0 = arith.constant 0 : index
  %y = linnet.expert_matmul %x, %w, %ids : (tensor<?x64xbf16>, tensor<4x128x64xbf16>, tensor<?x2xi32>) -> tensor<?x2x128xbf16>
  %rows = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%rows) : tensor<?x2x128xf32>
  %f = linalg.generic {indexing_maps = [#rjo, #rjo], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<?x2x128xbf16>) outs(%e : tensor<?x2x128xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<?x2x128xf32>
  return %f : tensor<?x2x128xf32>
}

func.func @print(%y: tensor<?x2x128xf32>, %r: index, %j: index, %o: index) {
  %v = tensor.extract %y[%r, %j, %o] : tensor<?x2x128xf32>
  %i = arith.fptosi %v : f32 to i32
  vector.print %i : i32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %c76 = arith.constant 76 : index
  %c131 = arith.constant 131 : index
  %c150 = arith.constant 150 : index
  %c199 = arith.constant 199 : index
  %c200 = arith.constant 200 : index
  %ex = tensor.empty(%c200) : tensor<?x64xbf16>
  %x = call @tokens(%ex) : (tensor<?x64xbf16>) -> tensor<?x64xbf16>
  %ew = tensor.empty() : tensor<4x128x64xbf16>
  %w = call @weights(%ew) : (tensor<4x128x64xbf16>) -> tensor<4x128x64xbf16>
  %ei = tensor.empty(%c200) : tensor<?x2xi32>
  %ids = call @choices(%ei) : (tensor<?x2xi32>) -> tensor<?x2xi32>
  %y = call @route(%x, %w, %ids) : (tensor<?x64xbf16>, tensor<4x128x64xbf16>, tensor<?x2xi32>) -> tensor<?x2x128xf32>
  // The checksum: sum of y[r, j, o] ((r + 3 j + o) mod 7).
  %zero = arith.constant 0.0 : f64
  %s0 = tensor.empty() : tensor<f64>
  %s1 = linalg.fill ins(%zero : f64) outs(%s0 : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [#rjo, #sum], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<?x2x128xf32>) outs(%s1 : tensor<f64>) {
  ^bb0(%v: f32, %acc: f64):
    %r = linalg.index 0 : index
    %j = linalg.index 1 : index
    %o = linalg.index 2 : index
    %k3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %j3 = arith.muli %j, %k3 : index
    %t0 = arith.addi %r, %j3 : index
    %t = arith.addi %t0, %o : index
    %m = arith.remui %t, %c7 : index
    %mi = arith.index_cast %m : index to i64
    %mf = arith.sitofp %mi : i64 to f64
    %vf = arith.extf %v : f32 to f64
    %p = arith.mulf %vf, %mf : f64
    %a = arith.addf %acc, %p : f64
    linalg.yield %a : f64
  } -> tensor<f64>
  %sv = tensor.extract %s[] : tensor<f64>
  %si = arith.fptosi %sv : f64 to i64
  vector.print %si : i64
  call @print(%y, %c0, %c0, %c9) : (tensor<?x2x128xf32>, index, index, index) -> ()
  call @print(%y, %c0, %c1, %c1) : (tensor<?x2x128xf32>, index, index, index) -> ()
  call @print(%y, %c150, %c1, %c3) : (tensor<?x2x128xf32>, index, index, index) -> ()
  call @print(%y, %c199, %c0, %c2) : (tensor<?x2x128xf32>, index, index, index) -> ()
  call @print(%y, %c131, %c0, %c76) : (tensor<?x2x128xf32>, index, index, index) -> ()
  return
}

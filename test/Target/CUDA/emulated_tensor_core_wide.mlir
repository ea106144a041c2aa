// A prompt-sized product on the tensor cores in the wide layout (warp tiles
// of 32 x 64, a block tile of 128 x 128 at 256 threads), on the emulated
// device: x[150, 64] (a run-time row count) by w[136, 64], the sums plus
// the column's index through the consumer from the accumulators; and the
// same product added to sums so far (its accumulators start from them).
// Both block tiles are cut at the edge (rows 128-149, columns 128-135).
// Exact integers: numpy's matmul of the same formulas gives the values
// checked and the checksums, sum over s, n of y[s, n] ((7 s + 3 n) mod 11
// + 1).
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=TILES
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s
// At 128 threads a block the tile is 128 x 64 (one column of warps).
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=128" | %mlir_runner | FileCheck %s

// TILES-LABEL: func.func @project(
// TILES: scf.forall {{.*}} step (128, 128)
// TILES: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}thread = [128, 128, 0]

// The stages hold 128 rows of A and of B (40 elements a row); a warp reads
// two A fragments and four pairs of B fragments a 16 of the depth and runs
// 16 mma.sync on them: 32 a step of 32.
// GPU-LABEL: gpu.func @project_1_generic
// GPU-SAME: workgroup(%{{.*}} : memref<5120xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<5120xbf16, #gpu.address_space<workgroup>>)
// GPU: scf.for {{.*}} step %c32{{.*}} -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// GPU-COUNT-2: nvgpu.ldmatrix
// GPU-COUNT-32: nvgpu.mma.sync
// GPU-NOT: nvgpu.mma.sync
// GPU: scf.yield
// GPU-COUNT-64: arith.sitofp

// Added to sums so far (a shared expert's down projection onto the routed
// experts'): y2 = x w^T + r, r[s, n] = (2 s + n) mod 13 - 6, its tile a
// copy of r that the accumulators start from.
// GPU-LABEL: gpu.func @accumulate_1_generic
// GPU-SAME: workgroup(%{{.*}} : memref<5120xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<5120xbf16, #gpu.address_space<workgroup>>)
// GPU-COUNT-64: memref.load %{{.*}} : memref<?x?xf32, strided<[136, 1], offset: ?>>

// CHECK: 8261806
// CHECK-NEXT: 12
// CHECK-NEXT: 123
// CHECK-NEXT: 127
// CHECK-NEXT: 119
// CHECK-NEXT: 19
// CHECK-NEXT: 136
// CHECK-NEXT: 125
// CHECK-NEXT: 62
// CHECK-NEXT: -334
// CHECK-NEXT: 6
// CHECK-NEXT: -14
// CHECK-NEXT: -8
// CHECK-NEXT: -3

#sk = affine_map<(s, k) -> (s, k)>
#x = affine_map<(s, n, k) -> (s, k)>
#w = affine_map<(s, n, k) -> (n, k)>
#y = affine_map<(s, n, k) -> (s, n)>
#sn = affine_map<(s, n) -> (s, n)>

// x[s, k] = (3 s + k k) mod 7 - 3
func.func @rows(%e: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x64xbf16>) {
  ^bb0(%o: bf16):
    %s = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %s3 = arith.muli %s, %c3 : index
    %kk = arith.muli %k, %k : index
    %t = arith.addi %s3, %kk : index
    %m = arith.remui %t, %c7 : index
    %c = arith.subi %m, %c3 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<?x64xbf16>
  return %r : tensor<?x64xbf16>
}

// w[n, k] = (5 n + 2 k) mod 9 - 4
func.func @weights(%e: tensor<136x64xbf16>) -> tensor<136x64xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<136x64xbf16>) {
  ^bb0(%o: bf16):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c9 = arith.constant 9 : index
    %n5 = arith.muli %n, %c5 : index
    %k2 = arith.muli %k, %c2 : index
    %t = arith.addi %n5, %k2 : index
    %m = arith.remui %t, %c9 : index
    %c = arith.subi %m, %c4 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<136x64xbf16>
  return %r : tensor<136x64xbf16>
}

// y[s, n] = sum_k x[s, k] w[n, k] + n
func.func @project(%x: tensor<?x64xbf16>, %w: tensor<136x64xbf16>) -> tensor<?x136xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %e = tensor.empty(%rows) : tensor<?x136xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x136xf32>) -> tensor<?x136xf32>
  %sums = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x64xbf16>, tensor<136x64xbf16>) outs(%f : tensor<?x136xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x136xf32>
  %e2 = tensor.empty(%rows) : tensor<?x136xf32>
  %y = linalg.generic {indexing_maps = [#sn, #sn], iterator_types = ["parallel", "parallel"]}
      ins(%sums : tensor<?x136xf32>) outs(%e2 : tensor<?x136xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = linalg.index 1 : index
    %ni = arith.index_cast %n : index to i32
    %nf = arith.sitofp %ni : i32 to f32
    %t = arith.addf %v, %nf : f32
    linalg.yield %t : f32
  } -> tensor<?x136xf32>
  return %y : tensor<?x136xf32>
}

// r[s, n] = (2 s + n) mod 13 - 6
func.func @so_far(%e: tensor<?x136xf32>) -> tensor<?x136xf32> {
  %r = linalg.generic {indexing_maps = [#sn], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x136xf32>) {
  ^bb0(%o: f32):
    %s = linalg.index 0 : index
    %n = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c6 = arith.constant 6 : index
    %c13 = arith.constant 13 : index
    %s2 = arith.muli %s, %c2 : index
    %t = arith.addi %s2, %n : index
    %m = arith.remui %t, %c13 : index
    %c = arith.subi %m, %c6 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to f32
    linalg.yield %cf : f32
  } -> tensor<?x136xf32>
  return %r : tensor<?x136xf32>
}

// y2[s, n] = r[s, n] + sum_k x[s, k] w[n, k], widened to f64
func.func @accumulate(%x: tensor<?x64xbf16>, %w: tensor<136x64xbf16>, %r: tensor<?x136xf32>) -> tensor<?x136xf64> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %sums = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x64xbf16>, tensor<136x64xbf16>) outs(%r : tensor<?x136xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x136xf32>
  %e = tensor.empty(%rows) : tensor<?x136xf64>
  %y = linalg.generic {indexing_maps = [#sn, #sn], iterator_types = ["parallel", "parallel"]}
      ins(%sums : tensor<?x136xf32>) outs(%e : tensor<?x136xf64>) {
  ^bb0(%v: f32, %o: f64):
    %t = arith.extf %v : f32 to f64
    linalg.yield %t : f64
  } -> tensor<?x136xf64>
  return %y : tensor<?x136xf64>
}

func.func @print64(%y: tensor<?x136xf64>, %s: index, %n: index) {
  %v = tensor.extract %y[%s, %n] : tensor<?x136xf64>
  %i = arith.fptosi %v : f64 to i64
  vector.print %i : i64
  return
}

func.func @print(%y: tensor<?x136xf32>, %s: index, %n: index) {
  %v = tensor.extract %y[%s, %n] : tensor<?x136xf32>
  vector.print %v : f32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c64 = arith.constant 64 : index
  %c100 = arith.constant 100 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %c130 = arith.constant 130 : index
  %c131 = arith.constant 131 : index
  %c135 = arith.constant 135 : index
  %c136 = arith.constant 136 : index
  %c140 = arith.constant 140 : index
  %c149 = arith.constant 149 : index
  %c150 = arith.constant 150 : index
  %ex = tensor.empty(%c150) : tensor<?x64xbf16>
  %x = func.call @rows(%ex) : (tensor<?x64xbf16>) -> tensor<?x64xbf16>
  %ew = tensor.empty() : tensor<136x64xbf16>
  %w = func.call @weights(%ew) : (tensor<136x64xbf16>) -> tensor<136x64xbf16>
  %y = func.call @project(%x, %w) : (tensor<?x64xbf16>, tensor<136x64xbf16>) -> tensor<?x136xf32>
  %zero = arith.constant 0 : i64
  %sum = scf.for %s = %c0 to %c150 step %c1 iter_args(%a = %zero) -> (i64) {
    %row = scf.for %n = %c0 to %c136 step %c1 iter_args(%b = %a) -> (i64) {
      %v = tensor.extract %y[%s, %n] : tensor<?x136xf32>
      %vi = arith.fptosi %v : f32 to i64
      %s7 = arith.muli %s, %c7 : index
      %n3 = arith.muli %n, %c3 : index
      %t = arith.addi %s7, %n3 : index
      %m = arith.remui %t, %c11 : index
      %m1 = arith.addi %m, %c1 : index
      %mi = arith.index_cast %m1 : index to i64
      %p = arith.muli %vi, %mi : i64
      %next = arith.addi %b, %p : i64
      scf.yield %next : i64
    }
    scf.yield %row : i64
  }
  vector.print %sum : i64
  func.call @print(%y, %c0, %c0) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c149, %c135) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c127, %c127) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c128, %c128) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c100, %c7) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c140, %c130) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c5, %c131) : (tensor<?x136xf32>, index, index) -> ()
  func.call @print(%y, %c131, %c64) : (tensor<?x136xf32>, index, index) -> ()

  %er = tensor.empty(%c150) : tensor<?x136xf32>
  %r = func.call @so_far(%er) : (tensor<?x136xf32>) -> tensor<?x136xf32>
  %y2 = func.call @accumulate(%x, %w, %r) : (tensor<?x64xbf16>, tensor<136x64xbf16>, tensor<?x136xf32>) -> tensor<?x136xf64>
  %sum2 = scf.for %s = %c0 to %c150 step %c1 iter_args(%a = %zero) -> (i64) {
    %row = scf.for %n = %c0 to %c136 step %c1 iter_args(%b = %a) -> (i64) {
      %v = tensor.extract %y2[%s, %n] : tensor<?x136xf64>
      %vi = arith.fptosi %v : f64 to i64
      %s7 = arith.muli %s, %c7 : index
      %n3 = arith.muli %n, %c3 : index
      %t = arith.addi %s7, %n3 : index
      %m = arith.remui %t, %c11 : index
      %m1 = arith.addi %m, %c1 : index
      %mi = arith.index_cast %m1 : index to i64
      %p = arith.muli %vi, %mi : i64
      %next = arith.addi %b, %p : i64
      scf.yield %next : i64
    }
    scf.yield %row : i64
  }
  vector.print %sum2 : i64
  func.call @print64(%y2, %c0, %c0) : (tensor<?x136xf64>, index, index) -> ()
  func.call @print64(%y2, %c149, %c135) : (tensor<?x136xf64>, index, index) -> ()
  func.call @print64(%y2, %c128, %c128) : (tensor<?x136xf64>, index, index) -> ()
  %c77 = arith.constant 77 : index
  func.call @print64(%y2, %c77, %c131) : (tensor<?x136xf64>, index, index) -> ()
  return
}

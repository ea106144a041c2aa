// Matrix products of bf16 rows on the tensor cores, on the emulated device:
// x[37, 48] by w[40, 48] (tiles of 16 x 32 cut at both edges), its sums
// rounded with a bias in the same kernel; and a batch of two x[21, 32] by
// w[24, 32] with the weights as the first input. Each warp's mma.sync runs
// as an exchange of the lanes' fragments between barriers, and the sums a
// warp carries over the reduced depth in buffers of a value per thread.
// Exact integers (each input's formula is above its function; numpy's
// matmul of the same integers gives the values checked).
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=TILES
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=128" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=512" | %mlir_runner | FileCheck %s
// A product of a static handful of rows (a decode step's) stays a warp
// reduction's.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=FEW

// The product's block is 64 rows by 64 columns (32 a column of warps); the
// rounding that reads it takes the same tile, and the product joins it.
// TILES-LABEL: func.func @project(
// TILES: scf.forall {{.*}} step (64, 40)
// TILES: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}thread = [64, 40, 0]
// TILES: linalg.generic {{.*}}thread = [64, 40]
// TILES-LABEL: func.func @project_batch(
// TILES: thread = [1, 64, 24, 0]

// The block stages 32 of the depth of its rows of A and B at a time in
// two workgroup buffers (64 and 64 rows of 40 elements), copied in 16-byte
// vectors where the input is contiguous along the depth and aligned (a run
// time check), element by element otherwise; a step's chunks are loaded
// during the step before (the first before the loop) and carried in
// registers; each warp reads its fragments from the stages with ldmatrix
// (four 8 x 8 matrices: A's 16 x 16, or two parts of B), 2 x 4 mma.sync a
// step. The emulated device runs an ldmatrix as an exchange of rows between
// the lanes.
// GPU-LABEL: gpu.func @project_1_generic
// GPU-SAME: workgroup(%{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<2560xbf16, #gpu.address_space<workgroup>>)
// GPU: memref.extract_aligned_pointer_as_index
// GPU: scf.for
// GPU: vector.load {{.*}} {alignment = 16 : i64} : memref<?x48xbf16, strided<[48, 1], offset: ?>>, vector<8xbf16>
// GPU: vector.load {{.*}} {alignment = 16 : i64} : memref<40x48xbf16>, vector<8xbf16>
// GPU: scf.for {{.*}} step %c32{{.*}} iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<8xbf16>, vector<8xbf16>)
// GPU-NEXT: gpu.barrier
// GPU: vector.store {{.*}} {alignment = 16 : i64} : memref<2560xbf16>, vector<8xbf16>
// GPU: vector.store {{.*}} {alignment = 16 : i64} : memref<2560xbf16>, vector<8xbf16>
// GPU-NEXT: gpu.barrier
// GPU: vector.load {{.*}} {alignment = 16 : i64} : memref<?x48xbf16, strided<[48, 1], offset: ?>>, vector<8xbf16>
// GPU: vector.load {{.*}} {alignment = 16 : i64} : memref<40x48xbf16>, vector<8xbf16>
// GPU: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<2560xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// GPU-COUNT-8: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// GPU-NOT: nvgpu.mma.sync
// GPU: scf.yield
// The sums go from the accumulators through the rounding that reads them
// (its bias a column's index), each lane storing its own elements: no tile
// of f32 sums in workgroup memory, no barrier before the rounding.
// GPU-NEXT: }
// GPU-NEXT: arith.andi
// GPU-NEXT: scf.if
// GPU-NEXT: vector.extract
// GPU-NEXT: arith.index_cast
// GPU-NEXT: arith.sitofp
// GPU-NEXT: arith.addf
// GPU-NEXT: arith.truncf
// GPU-NEXT: memref.store {{.*}} : memref<?x40xbf16
// GPU-LABEL: gpu.func @project_batch_1_generic
// GPU-COUNT-8: nvgpu.mma.sync
// A weight laid out along its columns has no vector copy, nor have rows
// 98 bytes apart (the alignment check folds to false).
// GPU-LABEL: gpu.func @project_offset_1_matmul
// GPU-NOT: vector.load {{.*}}vector<8xbf16>
// GPU: gpu.return

// FEW-LABEL: gpu.func @project_few_0_generic
// FEW-NOT: nvgpu.mma.sync
// FEW: gpu.shuffle xor

// CHECK: 16
// CHECK-NEXT: 31
// CHECK-NEXT: 28
// CHECK-NEXT: 19
// CHECK-NEXT: 46
// CHECK-NEXT: 20
// CHECK-NEXT: 1
// CHECK-NEXT: 2
// CHECK-NEXT: -6
// CHECK-NEXT: 3
// CHECK-NEXT: 0
// CHECK-NEXT: -5
// CHECK-NEXT: -8
// CHECK-NEXT: -9
// CHECK-NEXT: -5
// CHECK-NEXT: 18

#sk = affine_map<(s, k) -> (s, k)>
#bsk = affine_map<(b, s, k) -> (b, s, k)>
#x = affine_map<(s, n, k) -> (s, k)>
#w = affine_map<(s, n, k) -> (n, k)>
#wt = affine_map<(s, n, k) -> (k, n)>
#y = affine_map<(s, n, k) -> (s, n)>
#sn = affine_map<(s, n) -> (s, n)>
#w2 = affine_map<(b, s, n, k) -> (n, k)>
#x2 = affine_map<(b, s, n, k) -> (b, s, k)>
#y2 = affine_map<(b, s, n, k) -> (b, s, n)>

// x[s, k] = (3 s + k k) mod 7 - 3
func.func @rows(%e: tensor<?x48xbf16>) -> tensor<?x48xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x48xbf16>) {
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
  } -> tensor<?x48xbf16>
  return %r : tensor<?x48xbf16>
}

// w[n, k] = (5 n + 2 k) mod 9 - 4
func.func @weights(%e: tensor<40x48xbf16>) -> tensor<40x48xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<40x48xbf16>) {
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
  } -> tensor<40x48xbf16>
  return %r : tensor<40x48xbf16>
}

// y[s, n] = bf16(sum_k x[s, k] w[n, k] + n)
func.func @project(%x: tensor<?x48xbf16>, %w: tensor<40x48xbf16>) -> tensor<?x40xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x48xbf16>
  %e = tensor.empty(%rows) : tensor<?x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x40xf32>) -> tensor<?x40xf32>
  %sums = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x48xbf16>, tensor<40x48xbf16>) outs(%f : tensor<?x40xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x40xf32>
  %eb = tensor.empty(%rows) : tensor<?x40xbf16>
  %y = linalg.generic {indexing_maps = [#sn, #sn], iterator_types = ["parallel", "parallel"]}
      ins(%sums : tensor<?x40xf32>) outs(%eb : tensor<?x40xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %n = linalg.index 1 : index
    %ni = arith.index_cast %n : index to i32
    %nf = arith.sitofp %ni : i32 to f32
    %t = arith.addf %v, %nf : f32
    %r = arith.truncf %t : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<?x40xbf16>
  return %y : tensor<?x40xbf16>
}

// The same product of 3 rows: no tensor cores.
func.func @project_few(%x: tensor<3x48xbf16>, %w: tensor<40x48xbf16>) -> tensor<3x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x40xf32>) -> tensor<3x40xf32>
  %sums = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<3x48xbf16>, tensor<40x48xbf16>) outs(%f : tensor<3x40xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x40xf32>
  return %sums : tensor<3x40xf32>
}

// x2[b, s, k] = (b + 2 s + k k) mod 5 - 2
func.func @rows_batch(%e: tensor<2x?x32xbf16>) -> tensor<2x?x32xbf16> {
  %r = linalg.generic {indexing_maps = [#bsk], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x?x32xbf16>) {
  ^bb0(%o: bf16):
    %b = linalg.index 0 : index
    %s = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %s2 = arith.muli %s, %c2 : index
    %kk = arith.muli %k, %k : index
    %t0 = arith.addi %b, %s2 : index
    %t = arith.addi %t0, %kk : index
    %m = arith.remui %t, %c5 : index
    %c = arith.subi %m, %c2 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<2x?x32xbf16>
  return %r : tensor<2x?x32xbf16>
}

// w2[n, k] = (n n + 3 k) mod 7 - 3
func.func @weights_batch(%e: tensor<24x32xbf16>) -> tensor<24x32xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<24x32xbf16>) {
  ^bb0(%o: bf16):
    %n = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %nn = arith.muli %n, %n : index
    %k3 = arith.muli %k, %c3 : index
    %t = arith.addi %nn, %k3 : index
    %m = arith.remui %t, %c7 : index
    %c = arith.subi %m, %c3 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<24x32xbf16>
  return %r : tensor<24x32xbf16>
}

// y2[b, s, n] = sum_k w2[n, k] x2[b, s, k]
func.func @project_batch(%w: tensor<24x32xbf16>, %x: tensor<2x?x32xbf16>) -> tensor<2x?x24xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c1 : tensor<2x?x32xbf16>
  %e = tensor.empty(%rows) : tensor<2x?x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x?x24xf32>) -> tensor<2x?x24xf32>
  %y = linalg.generic {indexing_maps = [#w2, #x2, #y2], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%w, %x : tensor<24x32xbf16>, tensor<2x?x32xbf16>) outs(%f : tensor<2x?x24xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %bf, %af : f32
    %s = arith.addf %p, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x?x24xf32>
  return %y : tensor<2x?x24xf32>
}

// xo[s, j] = (2 s + 3 j) mod 7 - 3, of which columns 1..48 are read: rows
// 98 bytes apart, starting 2 bytes past a 16-byte boundary, which the
// block copies element by element.
func.func @rows_offset(%e: tensor<?x49xbf16>) -> tensor<?x49xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x49xbf16>) {
  ^bb0(%o: bf16):
    %s = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c7 = arith.constant 7 : index
    %s2 = arith.muli %s, %c2 : index
    %j3 = arith.muli %j, %c3 : index
    %t = arith.addi %s2, %j3 : index
    %m = arith.remui %t, %c7 : index
    %c = arith.subi %m, %c3 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<?x49xbf16>
  return %r : tensor<?x49xbf16>
}

// wt[k, n] = (k + 4 n) mod 5 - 2: a weight laid out along its columns, not
// the depth, which the block also copies element by element.
func.func @weights_transposed(%e: tensor<48x40xbf16>) -> tensor<48x40xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<48x40xbf16>) {
  ^bb0(%o: bf16):
    %k = linalg.index 0 : index
    %n = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %n4 = arith.muli %n, %c4 : index
    %t = arith.addi %k, %n4 : index
    %m = arith.remui %t, %c5 : index
    %c = arith.subi %m, %c2 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to bf16
    linalg.yield %cf : bf16
  } -> tensor<48x40xbf16>
  return %r : tensor<48x40xbf16>
}

// y3[s, n] = sum_k xo[s, k + 1] wt[k, n]
func.func @project_offset(%xo: tensor<?x49xbf16>, %w: tensor<48x40xbf16>) -> tensor<?x40xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %xo, %c0 : tensor<?x49xbf16>
  %x = tensor.extract_slice %xo[0, 1] [%rows, 48] [1, 1] : tensor<?x49xbf16> to tensor<?x48xbf16>
  %e = tensor.empty(%rows) : tensor<?x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x40xf32>) -> tensor<?x40xf32>
  %y = linalg.generic {indexing_maps = [#x, #wt, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x48xbf16>, tensor<48x40xbf16>) outs(%f : tensor<?x40xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x40xf32>
  return %y : tensor<?x40xf32>
}

func.func @print(%y: tensor<?x40xbf16>, %s: index, %n: index) {
  %v = tensor.extract %y[%s, %n] : tensor<?x40xbf16>
  %f = arith.extf %v : bf16 to f32
  vector.print %f : f32
  return
}

func.func @print_f32(%y: tensor<?x40xf32>, %s: index, %n: index) {
  %v = tensor.extract %y[%s, %n] : tensor<?x40xf32>
  vector.print %v : f32
  return
}

func.func @print_batch(%y: tensor<2x?x24xf32>, %b: index, %s: index, %n: index) {
  %v = tensor.extract %y[%b, %s, %n] : tensor<2x?x24xf32>
  vector.print %v : f32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %c17 = arith.constant 17 : index
  %c20 = arith.constant 20 : index
  %c21 = arith.constant 21 : index
  %c23 = arith.constant 23 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %c33 = arith.constant 33 : index
  %c36 = arith.constant 36 : index
  %c37 = arith.constant 37 : index
  %c39 = arith.constant 39 : index
  %ex = tensor.empty(%c37) : tensor<?x48xbf16>
  %x = func.call @rows(%ex) : (tensor<?x48xbf16>) -> tensor<?x48xbf16>
  %ew = tensor.empty() : tensor<40x48xbf16>
  %w = func.call @weights(%ew) : (tensor<40x48xbf16>) -> tensor<40x48xbf16>
  %y = func.call @project(%x, %w) : (tensor<?x48xbf16>, tensor<40x48xbf16>) -> tensor<?x40xbf16>
  func.call @print(%y, %c0, %c0) : (tensor<?x40xbf16>, index, index) -> ()
  func.call @print(%y, %c36, %c39) : (tensor<?x40xbf16>, index, index) -> ()
  func.call @print(%y, %c17, %c20) : (tensor<?x40xbf16>, index, index) -> ()
  func.call @print(%y, %c31, %c8) : (tensor<?x40xbf16>, index, index) -> ()
  func.call @print(%y, %c15, %c33) : (tensor<?x40xbf16>, index, index) -> ()
  func.call @print(%y, %c32, %c31) : (tensor<?x40xbf16>, index, index) -> ()

  %ex2 = tensor.empty(%c21) : tensor<2x?x32xbf16>
  %x2 = func.call @rows_batch(%ex2) : (tensor<2x?x32xbf16>) -> tensor<2x?x32xbf16>
  %ew2 = tensor.empty() : tensor<24x32xbf16>
  %w2 = func.call @weights_batch(%ew2) : (tensor<24x32xbf16>) -> tensor<24x32xbf16>
  %y2 = func.call @project_batch(%w2, %x2) : (tensor<24x32xbf16>, tensor<2x?x32xbf16>) -> tensor<2x?x24xf32>
  func.call @print_batch(%y2, %c0, %c0, %c0) : (tensor<2x?x24xf32>, index, index, index) -> ()
  func.call @print_batch(%y2, %c1, %c20, %c23) : (tensor<2x?x24xf32>, index, index, index) -> ()
  func.call @print_batch(%y2, %c1, %c5, %c17) : (tensor<2x?x24xf32>, index, index, index) -> ()
  func.call @print_batch(%y2, %c0, %c16, %c9) : (tensor<2x?x24xf32>, index, index, index) -> ()
  func.call @print_batch(%y2, %c1, %c15, %c0) : (tensor<2x?x24xf32>, index, index, index) -> ()

  %exo = tensor.empty(%c37) : tensor<?x49xbf16>
  %xo = func.call @rows_offset(%exo) : (tensor<?x49xbf16>) -> tensor<?x49xbf16>
  %ewt = tensor.empty() : tensor<48x40xbf16>
  %wt = func.call @weights_transposed(%ewt) : (tensor<48x40xbf16>) -> tensor<48x40xbf16>
  %y3 = func.call @project_offset(%xo, %wt) : (tensor<?x49xbf16>, tensor<48x40xbf16>) -> tensor<?x40xf32>
  func.call @print_f32(%y3, %c0, %c0) : (tensor<?x40xf32>, index, index) -> ()
  func.call @print_f32(%y3, %c36, %c39) : (tensor<?x40xf32>, index, index) -> ()
  func.call @print_f32(%y3, %c17, %c20) : (tensor<?x40xf32>, index, index) -> ()
  func.call @print_f32(%y3, %c31, %c8) : (tensor<?x40xf32>, index, index) -> ()
  func.call @print_f32(%y3, %c15, %c33) : (tensor<?x40xf32>, index, index) -> ()
  return
}

// A prompt's delta rule (a run-time number of tokens) on the emulated
// device: kept an op through bufferization, each value column the scan of
// 8 lanes (WarpScan.cpp). Two rows, the second of two active tokens of
// three; a key size of 40 (5 rows of the state a lane, elements: no whole
// 16-byte vectors) and 9 value columns (a block of 9 of 32 groups of lanes
// at 256 threads, where 23 compute the last column again and store
// nothing; blocks of 8 and of 1 at 64 threads). Gates of 0 and
// dyadic inputs make every value exact; the expected ones are those of the
// recurrence of MODEL.md 8.7 run in Python.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=64" | %mlir_runner | FileCheck %s

// Windows of 64 tokens (2 passes of the 32 groups of lanes) whose k . q
// the block sums first, each a shuffle sum of a group, into workgroup
// memory; then each token takes the state's two sums (6 shuffles) and
// reads k . q from there, no barrier.
// GPU: gpu.func @scan_{{[0-9]+}}_delta_rule{{.*}} workgroup({{.*}} : memref<256xi8, #gpu.address_space<workgroup>>)
// GPU: scf.for {{.*}} step %c64
// GPU-NEXT: gpu.barrier
// GPU: scf.for {{.*}} to %c64 step %c32
// GPU-COUNT-3: gpu.shuffle xor
// GPU: gpu.barrier
// GPU: scf.for
// GPU-NOT: gpu.barrier
// GPU-COUNT-6: gpu.shuffle xor
// GPU-NOT: gpu.shuffle
// GPU: memref.load %view
// GPU-NOT: gpu.barrier
// GPU: scf.yield

// out[0, 2, 0, 8], out[1, 1, 0, 3], out[1, 2, 0, 0] (inactive), out[0, 0, 0, 7]
// CHECK: -6.125
// CHECK-NEXT: -9.1875
// CHECK-NEXT: 0
// CHECK-NEXT: -3.75
// state[0, 0, 36, 8], state[0, 0, 38, 5], state[1, 0, 34, 4],
// state[1, 0, 2, 8], state[0, 0, 39, 0]
// CHECK-NEXT: 0.25
// CHECK-NEXT: -0.875
// CHECK-NEXT: -0.25
// CHECK-NEXT: -0.5
// CHECK-NEXT: -0.375

#btnk = affine_map<(b, t, n, k) -> (b, t, n, k)>
#btn = affine_map<(b, t, n) -> (b, t, n)>

// Each element of a [B, S, N, X] tensor from its indices.
func.func @fill4(%e: tensor<2x?x1x?xf32>, %kind: index) -> tensor<2x?x1x?xf32> {
  %r = linalg.generic {indexing_maps = [#btnk], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x?x1x?xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %t = linalg.index 1 : index
    %x = linalg.index 3 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %half = arith.constant 0.5 : f32
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %isQuery = arith.cmpi eq, %kind, %c0 : index
    %isKey = arith.cmpi eq, %kind, %c1 : index
    // query: ((k + t + b) mod 3) / 2
    %s0 = arith.addi %x, %t : index
    %s1 = arith.addi %s0, %b : index
    %m3 = arith.remui %s1, %c3 : index
    %m3i = arith.index_cast %m3 : index to i32
    %m3f = arith.sitofp %m3i : i32 to f32
    %q = arith.mulf %m3f, %half : f32
    // key: 1/2 where (2 k + t) mod 4 = 0, else 0
    %k2 = arith.muli %x, %c2 : index
    %k2t = arith.addi %k2, %t : index
    %m4 = arith.remui %k2t, %c4 : index
    %hit = arith.cmpi eq, %m4, %c0 : index
    %k = arith.select %hit, %half, %zero : f32
    // value: (v + t + 2 b) mod 5 - 2
    %b2 = arith.muli %b, %c2 : index
    %vt = arith.addi %x, %t : index
    %vtb = arith.addi %vt, %b2 : index
    %m5 = arith.remui %vtb, %c5 : index
    %m5i = arith.index_cast %m5 : index to i32
    %m5f = arith.sitofp %m5i : i32 to f32
    %v = arith.subf %m5f, %two : f32
    %kv = arith.select %isKey, %k, %v : f32
    %r = arith.select %isQuery, %q, %kv : f32
    linalg.yield %r : f32
  } -> tensor<2x?x1x?xf32>
  return %r : tensor<2x?x1x?xf32>
}

func.func @scan(%q: tensor<2x?x1x40xf32>, %k: tensor<2x?x1x40xf32>, %v: tensor<2x?x1x9xf32>,
                %beta: tensor<2x?x1xf32>, %g: tensor<2x?x1xf32>, %len: tensor<2xi32>,
                %init: tensor<2x1x40x9xf32>) -> (tensor<2x?x1x9xf32>, tensor<2x1x40x9xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<2x?x1x40xf32>
  %e = tensor.empty(%s) : tensor<2x?x1x9xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %len outs(%e, %init)
      : (tensor<2x?x1x40xf32>, tensor<2x?x1x40xf32>, tensor<2x?x1x9xf32>, tensor<2x?x1xf32>,
         tensor<2x?x1xf32>, tensor<2xi32>, tensor<2x?x1x9xf32>, tensor<2x1x40x9xf32>)
      -> (tensor<2x?x1x9xf32>, tensor<2x1x40x9xf32>)
  return %out, %final : tensor<2x?x1x9xf32>, tensor<2x1x40x9xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c34 = arith.constant 34 : index
  %c36 = arith.constant 36 : index
  %c38 = arith.constant 38 : index
  %c39 = arith.constant 39 : index
  %c40 = arith.constant 40 : index
  %eq = tensor.empty(%c3, %c40) : tensor<2x?x1x?xf32>
  %ev = tensor.empty(%c3, %c9) : tensor<2x?x1x?xf32>
  %q0 = func.call @fill4(%eq, %c0) : (tensor<2x?x1x?xf32>, index) -> tensor<2x?x1x?xf32>
  %k0 = func.call @fill4(%eq, %c1) : (tensor<2x?x1x?xf32>, index) -> tensor<2x?x1x?xf32>
  %v0 = func.call @fill4(%ev, %c2) : (tensor<2x?x1x?xf32>, index) -> tensor<2x?x1x?xf32>
  %q = tensor.cast %q0 : tensor<2x?x1x?xf32> to tensor<2x?x1x40xf32>
  %k = tensor.cast %k0 : tensor<2x?x1x?xf32> to tensor<2x?x1x40xf32>
  %v = tensor.cast %v0 : tensor<2x?x1x?xf32> to tensor<2x?x1x9xf32>
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %eg = tensor.empty(%c3) : tensor<2x?x1xf32>
  %beta = linalg.fill ins(%half : f32) outs(%eg : tensor<2x?x1xf32>) -> tensor<2x?x1xf32>
  %g = linalg.fill ins(%zero : f32) outs(%eg : tensor<2x?x1xf32>) -> tensor<2x?x1xf32>
  %len = arith.constant dense<[3, 2]> : tensor<2xi32>
  // initial[b, 0, k, v] = ((k + v) mod 2) / 4
  %es = tensor.empty() : tensor<2x1x40x9xf32>
  %init = linalg.generic {indexing_maps = [#btnk], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%es : tensor<2x1x40x9xf32>) {
  ^bb0(%o: f32):
    %kk = linalg.index 2 : index
    %vv = linalg.index 3 : index
    %sum = arith.addi %kk, %vv : index
    %m = arith.remui %sum, %c2 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %quarter = arith.constant 0.25 : f32
    %r = arith.mulf %mf, %quarter : f32
    linalg.yield %r : f32
  } -> tensor<2x1x40x9xf32>
  %out, %final = func.call @scan(%q, %k, %v, %beta, %g, %len, %init)
      : (tensor<2x?x1x40xf32>, tensor<2x?x1x40xf32>, tensor<2x?x1x9xf32>, tensor<2x?x1xf32>,
         tensor<2x?x1xf32>, tensor<2xi32>, tensor<2x1x40x9xf32>) -> (tensor<2x?x1x9xf32>, tensor<2x1x40x9xf32>)
  %o1 = tensor.extract %out[%c0, %c2, %c0, %c8] : tensor<2x?x1x9xf32>
  %o2 = tensor.extract %out[%c1, %c1, %c0, %c3] : tensor<2x?x1x9xf32>
  %o3 = tensor.extract %out[%c1, %c2, %c0, %c0] : tensor<2x?x1x9xf32>
  %o4 = tensor.extract %out[%c0, %c0, %c0, %c7] : tensor<2x?x1x9xf32>
  vector.print %o1 : f32
  vector.print %o2 : f32
  vector.print %o3 : f32
  vector.print %o4 : f32
  %s1 = tensor.extract %final[%c0, %c0, %c36, %c8] : tensor<2x1x40x9xf32>
  %s2 = tensor.extract %final[%c0, %c0, %c38, %c5] : tensor<2x1x40x9xf32>
  %s3 = tensor.extract %final[%c1, %c0, %c34, %c4] : tensor<2x1x40x9xf32>
  %s4 = tensor.extract %final[%c1, %c0, %c2, %c8] : tensor<2x1x40x9xf32>
  %s5 = tensor.extract %final[%c0, %c0, %c39, %c0] : tensor<2x1x40x9xf32>
  vector.print %s1 : f32
  vector.print %s2 : f32
  vector.print %s3 : f32
  vector.print %s4 : f32
  vector.print %s5 : f32
  return
}

// A prompt's attention on the tensor cores (TensorCoreAttention.cpp) on the
// emulated device: a block a row, a head and 64 queries, 16 keys a step.
// 70 queries (a whole tile and one of 6) of 4 heads over 2 key heads, a key
// depth and value columns of 32 (two mma.sync deep; a column warp's 16
// columns two parts), rows at positions 5 and 0 with lengths 77 and 40 (a
// last step of keys partly past the length, whole steps past it skipped),
// then the same without lengths from positions 0 and 10 (the second row's
// last queries see all 80 keys), then scores that rise along the keys in
// one of a lane's two rows and fall in the other (the accumulators
// rescaled where either row's maximum moved, only there). Inputs are
// multiples of 1/16 (1/8 for the rising keys), exact in bf16; Inputs/tensor_core_attention.py computes the expected outputs from
// the definition with the same roundings (scores and weights to bf16, the
// output once).
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner \
// RUN:   | %refpython %S/Inputs/tensor_core_attention.py | FileCheck %s

// One kernel for the attention: its stages of keys and values (16 rows of
// 32 + 8), the queries' scores and the weights by the values on the tensor
// cores (the values' fragments by transposed ldmatrix), each row's maximum
// and sum across its four lanes, the weights by the fast exp.
// GPU-LABEL: gpu.func @attend_{{[0-9]+}}_attention
// GPU-SAME: workgroup(%{{.*}} : memref<640xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<640xbf16, #gpu.address_space<workgroup>>)
// GPU: scf.for
// GPU: gpu.barrier
// GPU: nvgpu.mma.sync
// GPU: gpu.shuffle xor
// GPU: math.exp {{.*}} fastmath<afn>
// GPU: nvgpu.ldmatrix {{.*}}transpose = true
// GPU: nvgpu.mma.sync
// GPU: scf.yield
// GPU: gpu.func @attend_all_{{[0-9]+}}_attention

// CHECK: with lengths: PASS
// CHECK: without lengths: PASS
// CHECK: maxima moving in one row of a lane: PASS

#all = affine_map<(a, b, c, d) -> (a, b, c, d)>

// ((x0 i0 + x1 i1 + x2 i2 + x3 i3) mod 17 - 8) / 16
func.func @inputs(%e: tensor<?x?x?x?xbf16>, %x0: index, %x1: index,
                  %x2: index, %x3: index) -> tensor<?x?x?x?xbf16> {
  %r = linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %t0 = arith.muli %i0, %x0 : index
    %t1 = arith.muli %i1, %x1 : index
    %t2 = arith.muli %i2, %x2 : index
    %t3 = arith.muli %i3, %x3 : index
    %s0 = arith.addi %t0, %t1 : index
    %s1 = arith.addi %t2, %t3 : index
    %s = arith.addi %s0, %s1 : index
    %c17 = arith.constant 17 : index
    %m = arith.remui %s, %c17 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %c8 = arith.constant 8.0 : f32
    %c16 = arith.constant 0.0625 : f32
    %d = arith.subf %mf, %c8 : f32
    %v = arith.mulf %d, %c16 : f32
    %b = arith.truncf %v : f32 to bf16
    linalg.yield %b : bf16
  } -> tensor<?x?x?x?xbf16>
  return %r : tensor<?x?x?x?xbf16>
}

// Queries and keys whose scores rise along the keys in half the rows and
// fall in the others: element 0 of query row s is 1 where s / 8 is even
// (a lane's row g), -1 where odd (its row g + 8); element 0 of key j is
// j / 8 (scores j / 32: a step of keys moves a rising row's maximum by 1/2);
// every other element 0. A lane's first row moves its maximum at
// every step, its second keeps the first key's.
func.func @ramps(%e: tensor<?x?x?x?xbf16>, %isKey: i1) -> tensor<?x?x?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %minus = arith.constant -1.0 : f32
  %step = arith.constant 0.125 : f32
  %r = linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x?x?x?xbf16>) {
  ^bb0(%o: bf16):
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %eighth = arith.divui %i2, %c8 : index
    %parity = arith.remui %eighth, %c2 : index
    %even = arith.cmpi eq, %parity, %c0 : index
    %sign = arith.select %even, %one, %minus : f32
    %ii = arith.index_cast %i2 : index to i32
    %if = arith.sitofp %ii : i32 to f32
    %ramp = arith.mulf %if, %step : f32
    %x = arith.select %isKey, %ramp, %sign : f32
    %first = arith.cmpi eq, %i3, %c0 : index
    %v = arith.select %first, %x, %zero : f32
    %b = arith.truncf %v : f32 to bf16
    linalg.yield %b : bf16
  } -> tensor<?x?x?x?xbf16>
  return %r : tensor<?x?x?x?xbf16>
}

func.func @attend(%q: tensor<2x4x?x32xbf16>, %k: tensor<2x2x80x32xbf16>,
                  %v: tensor<2x2x80x32xbf16>, %offset: tensor<2xi32>,
                  %scale: f32, %lengths: tensor<2xi32>) -> tensor<2x4x?x32xbf16> {
  %c2 = arith.constant 2 : index
  %queries = tensor.dim %q, %c2 : tensor<2x4x?x32xbf16>
  %init = tensor.empty(%queries) : tensor<2x4x?x32xbf16>
  %o = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init
      : (tensor<2x4x?x32xbf16>, tensor<2x2x80x32xbf16>, tensor<2x2x80x32xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x?x32xbf16>) -> tensor<2x4x?x32xbf16>
  return %o : tensor<2x4x?x32xbf16>
}

func.func @attend_all(%q: tensor<2x4x?x32xbf16>, %k: tensor<2x2x80x32xbf16>,
                      %v: tensor<2x2x80x32xbf16>, %offset: tensor<2xi32>,
                      %scale: f32) -> tensor<2x4x?x32xbf16> {
  %c2 = arith.constant 2 : index
  %queries = tensor.dim %q, %c2 : tensor<2x4x?x32xbf16>
  %init = tensor.empty(%queries) : tensor<2x4x?x32xbf16>
  %o = linnet.attention %q, %k, %v, %offset, %scale into %init
      : (tensor<2x4x?x32xbf16>, tensor<2x2x80x32xbf16>, tensor<2x2x80x32xbf16>,
         tensor<2xi32>, f32, tensor<2x4x?x32xbf16>) -> tensor<2x4x?x32xbf16>
  return %o : tensor<2x4x?x32xbf16>
}

// Prints every element of `o`, one a line.
func.func @print(%o: tensor<2x4x?x32xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %queries = tensor.dim %o, %c2 : tensor<2x4x?x32xbf16>
  scf.for %b = %c0 to %c2 step %c1 {
    scf.for %h = %c0 to %c4 step %c1 {
      scf.for %s = %c0 to %queries step %c1 {
        scf.for %e = %c0 to %c32 step %c1 {
          %x = tensor.extract %o[%b, %h, %s, %e] : tensor<2x4x?x32xbf16>
          %f = arith.extf %x : bf16 to f32
          vector.print %f : f32
        }
      }
    }
  }
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c32 = arith.constant 32 : index
  %c70 = arith.constant 70 : index
  %c80 = arith.constant 80 : index
  %eq = tensor.empty(%c2, %c4, %c70, %c32) : tensor<?x?x?x?xbf16>
  %ek = tensor.empty(%c2, %c2, %c80, %c32) : tensor<?x?x?x?xbf16>
  %q0 = func.call @inputs(%eq, %c11, %c7, %c3, %c5) : (tensor<?x?x?x?xbf16>, index, index, index, index) -> tensor<?x?x?x?xbf16>
  %k0 = func.call @inputs(%ek, %c13, %c5, %c7, %c3) : (tensor<?x?x?x?xbf16>, index, index, index, index) -> tensor<?x?x?x?xbf16>
  %v0 = func.call @inputs(%ek, %c7, %c11, %c5, %c2) : (tensor<?x?x?x?xbf16>, index, index, index, index) -> tensor<?x?x?x?xbf16>
  %q = tensor.cast %q0 : tensor<?x?x?x?xbf16> to tensor<2x4x?x32xbf16>
  %k = tensor.cast %k0 : tensor<?x?x?x?xbf16> to tensor<2x2x80x32xbf16>
  %v = tensor.cast %v0 : tensor<?x?x?x?xbf16> to tensor<2x2x80x32xbf16>
  %scale = arith.constant 0.25 : f32
  %offset = arith.constant dense<[5, 0]> : tensor<2xi32>
  %lengths = arith.constant dense<[77, 40]> : tensor<2xi32>
  %o = func.call @attend(%q, %k, %v, %offset, %scale, %lengths)
      : (tensor<2x4x?x32xbf16>, tensor<2x2x80x32xbf16>, tensor<2x2x80x32xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>) -> tensor<2x4x?x32xbf16>
  func.call @print(%o) : (tensor<2x4x?x32xbf16>) -> ()
  %offset2 = arith.constant dense<[0, 10]> : tensor<2xi32>
  %o2 = func.call @attend_all(%q, %k, %v, %offset2, %scale)
      : (tensor<2x4x?x32xbf16>, tensor<2x2x80x32xbf16>, tensor<2x2x80x32xbf16>,
         tensor<2xi32>, f32) -> tensor<2x4x?x32xbf16>
  func.call @print(%o2) : (tensor<2x4x?x32xbf16>) -> ()
  %false = arith.constant false
  %true = arith.constant true
  %rq0 = func.call @ramps(%eq, %false) : (tensor<?x?x?x?xbf16>, i1) -> tensor<?x?x?x?xbf16>
  %rk0 = func.call @ramps(%ek, %true) : (tensor<?x?x?x?xbf16>, i1) -> tensor<?x?x?x?xbf16>
  %rq = tensor.cast %rq0 : tensor<?x?x?x?xbf16> to tensor<2x4x?x32xbf16>
  %rk = tensor.cast %rk0 : tensor<?x?x?x?xbf16> to tensor<2x2x80x32xbf16>
  %o3 = func.call @attend_all(%rq, %rk, %v, %offset2, %scale)
      : (tensor<2x4x?x32xbf16>, tensor<2x2x80x32xbf16>, tensor<2x2x80x32xbf16>,
         tensor<2xi32>, f32) -> tensor<2x4x?x32xbf16>
  func.call @print(%o3) : (tensor<2x4x?x32xbf16>) -> ()
  return
}

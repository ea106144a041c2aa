// A prompt's delta rule on the emulated device (WarpScan.cpp) where a
// lane's rows of the key and query are whole 16-byte vectors: 3 rows of 67
// tokens (lengths 67, 37 and 0; 32 pairs of tokens whose reads are all
// inside the prompt, then a last pair of one token), 2 heads, a key size of
// 64 (8 rows a lane, two vectors each of key and query) and 40 value
// columns (blocks of 32 and 8 columns at 256 threads, of 8 at 64), gates
// below 0 (decay exp(g) < 1). A block's k . q comes from windows of 64
// tokens at 256 threads (2, the last of 3 tokens) and of 16 at 64 (5).
// The first call reads buffers of their own (aligned: the vector form), the
// second keys and queries from element 1 of rows of 65 (not aligned: the
// form that reads elements); the third is the first with gates of -13 to
// -91 (the state's scale goes into its rows every few tokens). Inputs are
// multiples of 1/64; Inputs/warp_scan.py computes the recurrence of
// MODEL.md 8.7 in numpy (reference.delta_rule). Tolerance 1e-5 absolute
// plus 1e-4 relative: the kernel's f32 sums in another order and its exp
// (ex2.approx, about 2^-21 relative) against f64; a lost or misplaced row,
// lane, token or window moves outputs by hundredths or more. (Barriers run
// alike in every iteration of a loop here: a window's first barrier, which
// keeps a fast warp from writing the next window's products while a slow
// one reads this one's, is not one this device can show missing.)
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner \
// RUN:   | %refpython %S/Inputs/warp_scan.py | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=64" \
// RUN:   | %mlir_runner | %refpython %S/Inputs/warp_scan.py | FileCheck %s

// Both forms, chosen by the buffers' alignment; the first reads vectors.
// GPU-LABEL: gpu.func @scan_{{[0-9]+}}_delta_rule
// GPU: scf.if
// GPU: scf.for
// GPU: scf.for
// GPU-COUNT-4: vector.load {{.*}} vector<4xf32>
// GPU: math.fma
// GPU-COUNT-9: gpu.shuffle xor
// GPU: math.exp {{.*}} fastmath<afn>
// The state's rows over a scale: a decay multiplies them only where the
// scale fell below 2^-64, then the rows add the key times delta / scale.
// GPU: arith.cmpf olt, {{.*}}, %cst{{.*}} : f32
// GPU-NEXT: scf.if {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// GPU-COUNT-8: arith.mulf
// GPU: arith.divf {{.*}} fastmath<afn>
// GPU-COUNT-8: math.fma
// The version for rows that are not aligned (its first lanes, its column
// loop).
// GPU: } else {
// GPU: arith.cmpi eq
// GPU-NEXT: scf.for
// GPU-NOT: vector.load
// GPU: gpu.shuffle xor
// GPU: gpu.return

// CHECK: aligned output: PASS
// CHECK: aligned final state: PASS
// CHECK: offset output: PASS
// CHECK: offset final state: PASS
// CHECK: decaying output: PASS
// CHECK: decaying final state: PASS

#all = affine_map<(a, b, c, d) -> (a, b, c, d)>
#three = affine_map<(a, b, c) -> (a, b, c)>

// ((x0 i0 + x1 i1 + x2 i2 + x3 i3) mod 17 - 8) / 64
func.func @inputs(%e: tensor<?x?x?x?xf32>, %x0: index, %x1: index,
                  %x2: index, %x3: index) -> tensor<?x?x?x?xf32> {
  %c17 = arith.constant 17 : index
  %c8 = arith.constant 8.0 : f32
  %c64 = arith.constant 0.015625 : f32
  %r = linalg.generic {indexing_maps = [#all], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x?x?x?xf32>) {
  ^bb0(%o: f32):
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
    %m = arith.remui %s, %c17 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %d = arith.subf %mf, %c8 : f32
    %v = arith.mulf %d, %c64 : f32
    linalg.yield %v : f32
  } -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

// (((i0 + 2 i1 + 3 i2) mod m) + a) * f: betas (m 5, a 1, f 1/8) and gates
// (m 7, a 1, f -1/16).
func.func @gates(%e: tensor<3x?x2xf32>, %m: index, %a: f32, %f: f32) -> tensor<3x?x2xf32> {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %r = linalg.generic {indexing_maps = [#three], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<3x?x2xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %t1 = arith.muli %i1, %c2 : index
    %t2 = arith.muli %i2, %c3 : index
    %s0 = arith.addi %i0, %t1 : index
    %s = arith.addi %s0, %t2 : index
    %r0 = arith.remui %s, %m : index
    %ri = arith.index_cast %r0 : index to i32
    %rf = arith.sitofp %ri : i32 to f32
    %ra = arith.addf %rf, %a : f32
    %v = arith.mulf %ra, %f : f32
    linalg.yield %v : f32
  } -> tensor<3x?x2xf32>
  return %r : tensor<3x?x2xf32>
}

func.func @scan(%q: tensor<3x?x2x64xf32>, %k: tensor<3x?x2x64xf32>, %v: tensor<3x?x2x40xf32>,
                %beta: tensor<3x?x2xf32>, %g: tensor<3x?x2xf32>, %len: tensor<3xi32>,
                %init: tensor<3x2x64x40xf32>) -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %q, %c1 : tensor<3x?x2x64xf32>
  %e = tensor.empty(%s) : tensor<3x?x2x40xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %len outs(%e, %init)
      : (tensor<3x?x2x64xf32>, tensor<3x?x2x64xf32>, tensor<3x?x2x40xf32>, tensor<3x?x2xf32>,
         tensor<3x?x2xf32>, tensor<3xi32>, tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
      -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
  return %out, %final : tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>
}

// The keys and queries of @scan at element 1 of rows of 65.
func.func @scan_offset(%qw: tensor<3x?x2x65xf32>, %kw: tensor<3x?x2x65xf32>,
                       %v: tensor<3x?x2x40xf32>, %beta: tensor<3x?x2xf32>,
                       %g: tensor<3x?x2xf32>, %len: tensor<3xi32>,
                       %init: tensor<3x2x64x40xf32>) -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>) {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %qw, %c1 : tensor<3x?x2x65xf32>
  %q = tensor.extract_slice %qw[0, 0, 0, 1] [3, %s, 2, 64] [1, 1, 1, 1] : tensor<3x?x2x65xf32> to tensor<3x?x2x64xf32>
  %k = tensor.extract_slice %kw[0, 0, 0, 1] [3, %s, 2, 64] [1, 1, 1, 1] : tensor<3x?x2x65xf32> to tensor<3x?x2x64xf32>
  %e = tensor.empty(%s) : tensor<3x?x2x40xf32>
  %out, %final = linnet.delta_rule %q, %k, %v, %beta, %g, %len outs(%e, %init)
      : (tensor<3x?x2x64xf32>, tensor<3x?x2x64xf32>, tensor<3x?x2x40xf32>, tensor<3x?x2xf32>,
         tensor<3x?x2xf32>, tensor<3xi32>, tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
      -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
  return %out, %final : tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>
}

// Prints every element of the output, then of the final state, one a line.
func.func @print(%out: tensor<3x?x2x40xf32>, %final: tensor<3x2x64x40xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %tokens = tensor.dim %out, %c1 : tensor<3x?x2x40xf32>
  scf.for %b = %c0 to %c3 step %c1 {
    scf.for %t = %c0 to %tokens step %c1 {
      scf.for %n = %c0 to %c2 step %c1 {
        scf.for %v = %c0 to %c40 step %c1 {
          %x = tensor.extract %out[%b, %t, %n, %v] : tensor<3x?x2x40xf32>
          vector.print %x : f32
        }
      }
    }
  }
  scf.for %b = %c0 to %c3 step %c1 {
    scf.for %n = %c0 to %c2 step %c1 {
      scf.for %k = %c0 to %c64 step %c1 {
        scf.for %v = %c0 to %c40 step %c1 {
          %x = tensor.extract %final[%b, %n, %k, %v] : tensor<3x2x64x40xf32>
          vector.print %x : f32
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
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c67 = arith.constant 67 : index
  %c11 = arith.constant 11 : index
  %c13 = arith.constant 13 : index
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %c65 = arith.constant 65 : index
  %eq = tensor.empty(%c3, %c67, %c2, %c64) : tensor<?x?x?x?xf32>
  %ew = tensor.empty(%c3, %c67, %c2, %c65) : tensor<?x?x?x?xf32>
  %ev = tensor.empty(%c3, %c67, %c2, %c40) : tensor<?x?x?x?xf32>
  %es = tensor.empty(%c3, %c2, %c64, %c40) : tensor<?x?x?x?xf32>
  %q0 = func.call @inputs(%eq, %c11, %c7, %c3, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %k0 = func.call @inputs(%eq, %c13, %c5, %c7, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  // Keys and queries of their own in rows of 65, read from element 1.
  %qw0 = func.call @inputs(%ew, %c11, %c7, %c3, %c5) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %kw0 = func.call @inputs(%ew, %c13, %c5, %c7, %c3) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %v0 = func.call @inputs(%ev, %c7, %c11, %c5, %c2) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %s0 = func.call @inputs(%es, %c5, %c3, %c2, %c7) : (tensor<?x?x?x?xf32>, index, index, index, index) -> tensor<?x?x?x?xf32>
  %q = tensor.cast %q0 : tensor<?x?x?x?xf32> to tensor<3x?x2x64xf32>
  %k = tensor.cast %k0 : tensor<?x?x?x?xf32> to tensor<3x?x2x64xf32>
  %qw = tensor.cast %qw0 : tensor<?x?x?x?xf32> to tensor<3x?x2x65xf32>
  %kw = tensor.cast %kw0 : tensor<?x?x?x?xf32> to tensor<3x?x2x65xf32>
  %v = tensor.cast %v0 : tensor<?x?x?x?xf32> to tensor<3x?x2x40xf32>
  %init = tensor.cast %s0 : tensor<?x?x?x?xf32> to tensor<3x2x64x40xf32>
  %eg = tensor.empty(%c67) : tensor<3x?x2xf32>
  %one = arith.constant 1.0 : f32
  %eighth = arith.constant 0.125 : f32
  %sixteenth = arith.constant -0.0625 : f32
  %beta = func.call @gates(%eg, %c5, %one, %eighth) : (tensor<3x?x2xf32>, index, f32, f32) -> tensor<3x?x2xf32>
  %g = func.call @gates(%eg, %c7, %one, %sixteenth) : (tensor<3x?x2xf32>, index, f32, f32) -> tensor<3x?x2xf32>
  %len = arith.constant dense<[67, 37, 0]> : tensor<3xi32>
  %out, %final = func.call @scan(%q, %k, %v, %beta, %g, %len, %init)
      : (tensor<3x?x2x64xf32>, tensor<3x?x2x64xf32>, tensor<3x?x2x40xf32>, tensor<3x?x2xf32>,
         tensor<3x?x2xf32>, tensor<3xi32>, tensor<3x2x64x40xf32>) -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
  func.call @print(%out, %final) : (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>) -> ()
  %out2, %final2 = func.call @scan_offset(%qw, %kw, %v, %beta, %g, %len, %init)
      : (tensor<3x?x2x65xf32>, tensor<3x?x2x65xf32>, tensor<3x?x2x40xf32>, tensor<3x?x2xf32>,
         tensor<3x?x2xf32>, tensor<3xi32>, tensor<3x2x64x40xf32>) -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
  func.call @print(%out2, %final2) : (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>) -> ()
  // Gates of -13 to -91: the scale falls below 2^-64 every few tokens, and
  // a decay of exp(-91) takes a small scale to a subnormal or to 0.
  %thirteen = arith.constant -13.0 : f32
  %g3 = func.call @gates(%eg, %c7, %one, %thirteen) : (tensor<3x?x2xf32>, index, f32, f32) -> tensor<3x?x2xf32>
  %out3, %final3 = func.call @scan(%q, %k, %v, %beta, %g3, %len, %init)
      : (tensor<3x?x2x64xf32>, tensor<3x?x2x64xf32>, tensor<3x?x2x40xf32>, tensor<3x?x2xf32>,
         tensor<3x?x2xf32>, tensor<3xi32>, tensor<3x2x64x40xf32>) -> (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>)
  func.call @print(%out3, %final3) : (tensor<3x?x2x40xf32>, tensor<3x2x64x40xf32>) -> ()
  return
}

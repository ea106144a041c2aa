// A matmul of a transposed weight (`x @ transpose(w)`, as std.nn.linear writes
// it) reads the weight in place: the transpose fuses into the matmul's indexing
// map instead of being copied on every call. MLIR 22's generic-to-named
// specialization would drop that map (a plain linalg.matmul of the untransposed
// weight), so the contraction stays a generic with it: a 4x4 register tile of
// dot products whose lanes along k are carried as FMAs and reduced once, with
// masks at the edges of 37 rows and 29 columns. Numeric, static and dynamic
// rows, against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=FUSED
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_transposed | FileCheck %s
// RUN: linnet-opt %s --linnet-cpu-pipeline="threads=1 vectorize=false" | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_transposed | FileCheck %s
// CHECK: PASS matmul_transposed

// FUSED-LABEL: func.func @linear_static
// FUSED-NOT: tensor<53x29xf32>
// FUSED: vector.fma {{.*}} : vector<4x4x16xf32>
// FUSED: vector.multi_reduction <add>, {{.*}} [2] : vector<4x4x16xf32> to vector<4x4xf32>
// FUSED: return
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @linear_static(%x: tensor<37x53xf32>, %w: tensor<29x53xf32>) -> tensor<37x29xf32> attributes {llvm.emit_c_interface} {
  %e = tensor.empty() : tensor<53x29xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<29x53xf32>) outs(%e : tensor<53x29xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<53x29xf32>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %t : tensor<37x53xf32>, tensor<53x29xf32>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// FUSED-LABEL: func.func @linear_dynamic
// FUSED-NOT: tensor<53x29xf32>
// FUSED: return
func.func @linear_dynamic(%x: tensor<?x53xf32>, %w: tensor<29x53xf32>) -> tensor<?x29xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x53xf32>
  %e = tensor.empty() : tensor<53x29xf32>
  %t = linalg.transpose ins(%w : tensor<29x53xf32>) outs(%e : tensor<53x29xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty(%m) : tensor<?x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x29xf32>) -> tensor<?x29xf32>
  %r = linalg.matmul ins(%x, %t : tensor<?x53xf32>, tensor<53x29xf32>) outs(%c : tensor<?x29xf32>) -> tensor<?x29xf32>
  return %r : tensor<?x29xf32>
}

// value(i, j) = ((7 i + j + seed) mod 11 - 5) / 4, as in Inputs/check_cpu.py.
func.func @init(%rows: index, %cols: index, %seed: index) -> tensor<?x?xf32> {
  %e = tensor.empty(%rows, %cols) : tensor<?x?xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c11 = arith.constant 11 : index
    %c5 = arith.constant 5 : index
    %i7 = arith.muli %i, %c7 : index
    %s0 = arith.addi %i7, %j : index
    %s1 = arith.addi %s0, %seed : index
    %r = arith.remui %s1, %c11 : index
    %d = arith.subi %r, %c5 : index
    %di = arith.index_cast %d : index to i64
    %f = arith.sitofp %di : i64 to f32
    %quarter = arith.constant 0.25 : f32
    %v = arith.mulf %f, %quarter : f32
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %m = arith.constant 37 : index
  %k = arith.constant 53 : index
  %n = arith.constant 29 : index
  %s0 = arith.constant 0 : index
  %s3 = arith.constant 3 : index
  %a = call @init(%m, %k, %s0) : (index, index, index) -> tensor<?x?xf32>
  %b = call @init(%n, %k, %s3) : (index, index, index) -> tensor<?x?xf32>
  %as = tensor.cast %a : tensor<?x?xf32> to tensor<37x53xf32>
  %ad = tensor.cast %a : tensor<?x?xf32> to tensor<?x53xf32>
  %bs = tensor.cast %b : tensor<?x?xf32> to tensor<29x53xf32>
  %rs = call @linear_static(%as, %bs) : (tensor<37x53xf32>, tensor<29x53xf32>) -> tensor<37x29xf32>
  %us = tensor.cast %rs : tensor<37x29xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %rd = call @linear_dynamic(%ad, %bs) : (tensor<?x53xf32>, tensor<29x53xf32>) -> tensor<?x29xf32>
  %ud = tensor.cast %rd : tensor<?x29xf32> to tensor<*xf32>
  call @printMemrefF32(%ud) : (tensor<*xf32>) -> ()
  return
}

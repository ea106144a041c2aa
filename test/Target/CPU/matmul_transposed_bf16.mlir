// bf16 operands of a matmul of a transposed weight (`x @ transpose(w)`, f32
// sums): with bf16-dot-products (a CPU with AVX512-BF16) each 4x4 register
// tile's lanes along k are dot products of bf16 pairs
// (linnet-cpu-use-bf16-dot-products), which must give what widening both to
// f32 gives: static rows with masked edges (37 rows, 29 columns, k = 70 not
// a multiple of the 32 lanes, so the last k block reads zero padding),
// dynamic rows (split at a multiple of 4, the rest one row at a time), a
// single dynamic row and a static one (64 lanes, two dot products each). Numeric, both ways, against numpy.
// REQUIRES: avx512bf16
// RUN: linnet-opt %s --linnet-cpu-pipeline="stop-after=linalg bf16-dot-products=true" | FileCheck %s --check-prefix=PAIRED
// RUN: linnet-opt %s --linnet-cpu-pipeline="bf16-dot-products=true" | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_transposed_bf16 | FileCheck %s
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_transposed_bf16 | FileCheck %s
// CHECK: PASS matmul_transposed_bf16

// PAIRED-LABEL: func.func @linear_static
// PAIRED: scf.for {{.*}} -> (vector<4x4x16xf32>)
// PAIRED: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// PAIRED-NOT: vector.fma
// PAIRED: return
#tr = affine_map<(i, j, l) -> (j, l)>
#x = affine_map<(i, j, l) -> (i, l)>
#out = affine_map<(i, j, l) -> (i, j)>
func.func @linear_static(%x: tensor<37x70xbf16>, %w: tensor<29x70xbf16>) -> tensor<37x29xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.generic {indexing_maps = [#x, #tr, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<37x70xbf16>, tensor<29x70xbf16>) outs(%c : tensor<37x29xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// PAIRED-LABEL: func.func @linear_dynamic
// PAIRED-COUNT-2: x86vector.avx512.dot
// PAIRED-NOT: vector.fma
// PAIRED: return
func.func @linear_dynamic(%x: tensor<?x70xbf16>, %w: tensor<29x70xbf16>) -> tensor<?x29xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x70xbf16>
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty(%m) : tensor<?x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x29xf32>) -> tensor<?x29xf32>
  %r = linalg.generic {indexing_maps = [#x, #tr, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x70xbf16>, tensor<29x70xbf16>) outs(%c : tensor<?x29xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x29xf32>
  return %r : tensor<?x29xf32>
}

// A static single row: one output at a time with 64 lanes along k, two dot
// products of 32 bf16 lanes each.
// PAIRED-LABEL: func.func @linear_row
// PAIRED: scf.for {{.*}} -> (vector<32xf32>)
// PAIRED-COUNT-2: x86vector.avx512.dot
// PAIRED-NOT: vector.fma
// PAIRED: return
func.func @linear_row(%x: tensor<1x70xbf16>, %w: tensor<29x70xbf16>) -> tensor<1x29xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<1x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<1x29xf32>) -> tensor<1x29xf32>
  %r = linalg.generic {indexing_maps = [#x, #tr, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x70xbf16>, tensor<29x70xbf16>) outs(%c : tensor<1x29xf32>) {
  ^bb0(%a: bf16, %b: bf16, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x29xf32>
  return %r : tensor<1x29xf32>
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

func.func @to_bf16(%t: tensor<?x?xf32>) -> tensor<?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = tensor.dim %t, %c0 : tensor<?x?xf32>
  %c = tensor.dim %t, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%r, %c) : tensor<?x?xbf16>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<?x?xf32>) outs(%e : tensor<?x?xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %v = arith.truncf %in : f32 to bf16
    linalg.yield %v : bf16
  } -> tensor<?x?xbf16>
  return %b : tensor<?x?xbf16>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %m = arith.constant 37 : index
  %one = arith.constant 1 : index
  %k = arith.constant 70 : index
  %n = arith.constant 29 : index
  %s0 = arith.constant 0 : index
  %s3 = arith.constant 3 : index
  %af = call @init(%m, %k, %s0) : (index, index, index) -> tensor<?x?xf32>
  %bf = call @init(%n, %k, %s3) : (index, index, index) -> tensor<?x?xf32>
  %a = call @to_bf16(%af) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %b = call @to_bf16(%bf) : (tensor<?x?xf32>) -> tensor<?x?xbf16>
  %as = tensor.cast %a : tensor<?x?xbf16> to tensor<37x70xbf16>
  %ad = tensor.cast %a : tensor<?x?xbf16> to tensor<?x70xbf16>
  %bs = tensor.cast %b : tensor<?x?xbf16> to tensor<29x70xbf16>
  %rs = call @linear_static(%as, %bs) : (tensor<37x70xbf16>, tensor<29x70xbf16>) -> tensor<37x29xf32>
  %us = tensor.cast %rs : tensor<37x29xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %rd = call @linear_dynamic(%ad, %bs) : (tensor<?x70xbf16>, tensor<29x70xbf16>) -> tensor<?x29xf32>
  %ud = tensor.cast %rd : tensor<?x29xf32> to tensor<*xf32>
  call @printMemrefF32(%ud) : (tensor<*xf32>) -> ()
  %row = tensor.extract_slice %ad[0, 0] [1, 70] [1, 1] : tensor<?x70xbf16> to tensor<1x70xbf16>
  %rowd = tensor.cast %row : tensor<1x70xbf16> to tensor<?x70xbf16>
  %r1 = call @linear_dynamic(%rowd, %bs) : (tensor<?x70xbf16>, tensor<29x70xbf16>) -> tensor<?x29xf32>
  %u1 = tensor.cast %r1 : tensor<?x29xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  %rows = tensor.cast %row : tensor<1x70xbf16> to tensor<1x70xbf16>
  %r2 = call @linear_row(%rows, %bs) : (tensor<1x70xbf16>, tensor<29x70xbf16>) -> tensor<1x29xf32>
  %u2 = tensor.cast %r2 : tensor<1x29xf32> to tensor<*xf32>
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  return
}

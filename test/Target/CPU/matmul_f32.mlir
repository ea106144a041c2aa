// Numeric: f32 matmul with odd sizes (37x53x29), static and dynamic shapes,
// through the whole CPU pipeline, against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_f32 | FileCheck %s
// RUN: linnet-opt %s --linnet-cpu-pipeline="threads=1 vectorize=false" | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_f32 | FileCheck %s
// CHECK: PASS matmul_f32

func.func @matmul_static(%a: tensor<37x53xf32>, %b: tensor<53x29xf32>) -> tensor<37x29xf32> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%a, %b : tensor<37x53xf32>, tensor<53x29xf32>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

func.func @matmul_dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%c : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
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
  %b = call @init(%k, %n, %s3) : (index, index, index) -> tensor<?x?xf32>
  %as = tensor.cast %a : tensor<?x?xf32> to tensor<37x53xf32>
  %bs = tensor.cast %b : tensor<?x?xf32> to tensor<53x29xf32>
  %rs = call @matmul_static(%as, %bs) : (tensor<37x53xf32>, tensor<53x29xf32>) -> tensor<37x29xf32>
  %us = tensor.cast %rs : tensor<37x29xf32> to tensor<*xf32>
  call @printMemrefF32(%us) : (tensor<*xf32>) -> ()
  %rd = call @matmul_dynamic(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %ud = tensor.cast %rd : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%ud) : (tensor<*xf32>) -> ()
  return
}

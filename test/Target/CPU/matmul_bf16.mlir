// Numeric: bf16 x bf16 matmul accumulated in f32, then rounded to bf16
// (33x70x45), against numpy with the same single rounding.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py matmul_bf16 | FileCheck %s
// CHECK: PASS matmul_bf16

func.func @matmul_bf16(%a: tensor<33x70xbf16>, %b: tensor<70x45xbf16>) -> tensor<33x45xbf16> attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<33x45xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<33x45xf32>) -> tensor<33x45xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<33x70xbf16>, tensor<70x45xbf16>) outs(%c : tensor<33x45xf32>) -> tensor<33x45xf32>
  %eb = tensor.empty() : tensor<33x45xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<33x45xf32>) outs(%eb : tensor<33x45xbf16>) {
  ^bb0(%x: f32, %out: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<33x45xbf16>
  return %r : tensor<33x45xbf16>
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
  %m = arith.constant 33 : index
  %k = arith.constant 70 : index
  %n = arith.constant 45 : index
  %s0 = arith.constant 0 : index
  %s5 = arith.constant 5 : index
  %a = call @init(%m, %k, %s0) : (index, index, index) -> tensor<?x?xf32>
  %b = call @init(%k, %n, %s5) : (index, index, index) -> tensor<?x?xf32>
  %as = tensor.cast %a : tensor<?x?xf32> to tensor<33x70xf32>
  %bs = tensor.cast %b : tensor<?x?xf32> to tensor<70x45xf32>
  %ab = arith.truncf %as : tensor<33x70xf32> to tensor<33x70xbf16>
  %bb = arith.truncf %bs : tensor<70x45xf32> to tensor<70x45xbf16>
  %r = call @matmul_bf16(%ab, %bb) : (tensor<33x70xbf16>, tensor<70x45xbf16>) -> tensor<33x45xbf16>
  %rf = arith.extf %r : tensor<33x45xbf16> to tensor<33x45xf32>
  %u = tensor.cast %rf : tensor<33x45xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

// Numeric: softmax over the rows of a 13x50 f32 tensor (max, exp, sum,
// divide as four generics, one dispatch region), against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py softmax | FileCheck %s
// CHECK: PASS softmax

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xf32>
  %n = tensor.dim %x, %c1 : tensor<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty(%m) : tensor<?xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%minit : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%v: f32, %mx: f32, %out: f32):
    %d = arith.subf %v, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<?x?xf32>) outs(%sinit : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<?x?xf32>, tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%v: f32, %s: f32, %out: f32):
    %r = arith.divf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
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
  %m = arith.constant 13 : index
  %n = arith.constant 50 : index
  %s2 = arith.constant 2 : index
  %x0 = call @init(%m, %n, %s2) : (index, index, index) -> tensor<?x?xf32>
  %three = arith.constant 3.0 : f32
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%x0 : tensor<?x?xf32>) {
  ^bb0(%v: f32):
    %r = arith.mulf %v, %three : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %y = call @softmax(%x) : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = tensor.cast %y : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

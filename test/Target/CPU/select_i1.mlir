// Numeric: an i1 mask tensor (a > b) used by two selects, so the mask lives
// in memory between dispatch regions, against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py select | FileCheck %s
// CHECK: PASS select

#id = affine_map<(i, j) -> (i, j)>
func.func @select(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %ei = tensor.empty(%m, %n) : tensor<?x?xi1>
  %mask = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%ei : tensor<?x?xi1>) {
  ^bb0(%x: f32, %y: f32, %out: i1):
    %gt = arith.cmpf ogt, %x, %y : f32
    linalg.yield %gt : i1
  } -> tensor<?x?xi1>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %max = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask, %a, %b : tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%k: i1, %x: f32, %y: f32, %out: f32):
    %s = arith.select %k, %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %diff = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask, %a, %b : tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%k: i1, %x: f32, %y: f32, %out: f32):
    %d = arith.subf %x, %y : f32
    %s = arith.select %k, %d, %zero : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %max, %diff : tensor<?x?xf32>, tensor<?x?xf32>
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
  %m = arith.constant 19 : index
  %n = arith.constant 35 : index
  %s0 = arith.constant 0 : index
  %s6 = arith.constant 6 : index
  %a = call @init(%m, %n, %s0) : (index, index, index) -> tensor<?x?xf32>
  %b = call @init(%m, %n, %s6) : (index, index, index) -> tensor<?x?xf32>
  %max, %diff = call @select(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>)
  %u0 = tensor.cast %max : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  %u1 = tensor.cast %diff : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  return
}

// Numeric: an embedding lookup, a generic whose body gathers with
// tensor.extract at an index read from another tensor, against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py gather | FileCheck %s
// CHECK: PASS gather

func.func @embed(%table: tensor<?x?xf32>, %ids: tensor<?xi32>) -> tensor<?x?xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %ids, %c0 : tensor<?xi32>
  %d = tensor.dim %table, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%n, %d) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<?xi32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%id: i32, %out: f32):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<?x?xf32>
    linalg.yield %v : f32
  } -> tensor<?x?xf32>
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
  %rows = arith.constant 10 : index
  %cols = arith.constant 24 : index
  %s1 = arith.constant 1 : index
  %table = call @init(%rows, %cols, %s1) : (index, index, index) -> tensor<?x?xf32>
  %n = arith.constant 17 : index
  %e = tensor.empty(%n) : tensor<?xi32>
  // ids[i] = (3 i) mod 10
  %ids = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<?xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %c10 = arith.constant 10 : index
    %t = arith.muli %i, %c3 : index
    %m = arith.remui %t, %c10 : index
    %v = arith.index_cast %m : index to i32
    linalg.yield %v : i32
  } -> tensor<?xi32>
  %r = call @embed(%table, %ids) : (tensor<?x?xf32>, tensor<?xi32>) -> tensor<?x?xf32>
  %u = tensor.cast %r : tensor<?x?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

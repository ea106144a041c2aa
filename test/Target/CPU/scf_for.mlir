// Numeric: an scf.for carrying a tensor through iter_args, with a matmul and
// an elementwise update in the body: x = 0.5 (x @ w) + 1, four times.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py scf_for | FileCheck %s
// CHECK: PASS scf_for

#id = affine_map<(i, j) -> (i, j)>
func.func @iterate(%x0: tensor<7x16xf32>, %w: tensor<16x16xf32>) -> tensor<7x16xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %r = scf.for %it = %c0 to %c4 step %c1 iter_args(%x = %x0) -> (tensor<7x16xf32>) {
    %e = tensor.empty() : tensor<7x16xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<7x16xf32>) -> tensor<7x16xf32>
    %p = linalg.matmul ins(%x, %w : tensor<7x16xf32>, tensor<16x16xf32>) outs(%c : tensor<7x16xf32>) -> tensor<7x16xf32>
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<7x16xf32>) outs(%e : tensor<7x16xf32>) {
    ^bb0(%v: f32, %out: f32):
      %h = arith.mulf %v, %half : f32
      %s = arith.addf %h, %one : f32
      linalg.yield %s : f32
    } -> tensor<7x16xf32>
    scf.yield %y : tensor<7x16xf32>
  }
  return %r : tensor<7x16xf32>
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
  %c7 = arith.constant 7 : index
  %c16 = arith.constant 16 : index
  %s0 = arith.constant 0 : index
  %s4 = arith.constant 4 : index
  %x = call @init(%c7, %c16, %s0) : (index, index, index) -> tensor<?x?xf32>
  %w0 = call @init(%c16, %c16, %s4) : (index, index, index) -> tensor<?x?xf32>
  %quarter = arith.constant 0.25 : f32
  %w1 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%w0 : tensor<?x?xf32>) {
  ^bb0(%v: f32):
    %r = arith.mulf %v, %quarter : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %xs = tensor.cast %x : tensor<?x?xf32> to tensor<7x16xf32>
  %ws = tensor.cast %w1 : tensor<?x?xf32> to tensor<16x16xf32>
  %r = call @iterate(%xs, %ws) : (tensor<7x16xf32>, tensor<16x16xf32>) -> tensor<7x16xf32>
  %u = tensor.cast %r : tensor<7x16xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

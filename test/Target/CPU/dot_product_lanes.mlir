// Numeric: a matmul whose operands both run along k (x @ transpose(w), the
// weight in PyTorch's [out, in] layout) through the whole CPU pipeline, where
// it is a dot product per output with lanes along k carried through the k
// loop (test/Codegen/tile_and_vectorize.mlir), against numpy.
// RUN: linnet-opt %s --linnet-cpu-pipeline | %mlir_runner | %refpython %S/Inputs/check_cpu.py dot_product_lanes | FileCheck %s --check-prefix=NUMERIC
// NUMERIC: PASS dot_product_lanes

#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @gemv(%x: tensor<?x256xf32>, %w: tensor<512x256xf32>) -> tensor<?x512xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty() : tensor<256x512xf32>
  %t = linalg.transpose ins(%w : tensor<512x256xf32>) outs(%e : tensor<256x512xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty(%m) : tensor<?x512xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<?x512xf32>) -> tensor<?x512xf32>
  %r = linalg.matmul ins(%x, %t : tensor<?x256xf32>, tensor<256x512xf32>) outs(%c : tensor<?x512xf32>) -> tensor<?x512xf32>
  return %r : tensor<?x512xf32>
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
  %m = arith.constant 3 : index
  %k = arith.constant 256 : index
  %n = arith.constant 512 : index
  %s0 = arith.constant 0 : index
  %s3 = arith.constant 3 : index
  %a = call @init(%m, %k, %s0) : (index, index, index) -> tensor<?x?xf32>
  %b = call @init(%n, %k, %s3) : (index, index, index) -> tensor<?x?xf32>
  %ad = tensor.cast %a : tensor<?x?xf32> to tensor<?x256xf32>
  %bs = tensor.cast %b : tensor<?x?xf32> to tensor<512x256xf32>
  %r = call @gemv(%ad, %bs) : (tensor<?x256xf32>, tensor<512x256xf32>) -> tensor<?x512xf32>
  %u = tensor.cast %r : tensor<?x512xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

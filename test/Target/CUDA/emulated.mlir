// The CUDA target on the emulated device: the same dispatch regions, block
// tiles, mapping onto blocks and threads and workgroup buffers as for a GPU,
// each gpu.launch run by the host (its blocks in turn, each stretch between
// barriers for every thread), then lowered as the CPU lowers buffers. Exact
// numbers: every value below is an integer an f32 holds exactly.
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated stop-after=kernels" | FileCheck %s --check-prefix=HOST
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=32" | %mlir_runner | FileCheck %s

// On a GPU the tiles of x and of the sums are workgroup memory; on the
// emulated device buffers of each block's iteration.
// GPU: gpu.launch_func
// GPU: gpu.func {{.*}} workgroup(%{{.*}} : memref<256xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<4xf32, #gpu.address_space<workgroup>>)
// HOST-LABEL: func.func @main
// HOST-NOT: gpu.
// HOST-NOT: linalg.
// HOST: memref.alloc() : memref<256xf32>
// HOST: memref.alloc() : memref<4xf32>
// HOST: return

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#in3 = affine_map<(r, e, c) -> (r, e, c)>
#out3 = affine_map<(r, e, c) -> (r, c)>
#all3 = affine_map<(r, e, c) -> (r, e, c)>

// x[i, j] = i + j (600 x 64); s[i] = sum_j x[i, j] = 64 i + 2016; and
// y[i, j] = x[i, j] + s[i] = 65 i + j + 2016: y's region (4 rows of 64, 150
// blocks) fuses the row sums, whose tile is a workgroup buffer of its block.
// CHECK: 2016
// CHECK-NEXT: 21521
// CHECK-NEXT: 41014
// y[r, c] = sum_e (1000 r + 10 e + c) = 8000 r + 8 c + 280.
// CHECK-NEXT: 8320
// CHECK-NEXT: 16400
func.func @main() {
  %e2 = tensor.empty() : tensor<600x64xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e2 : tensor<600x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = arith.addi %i, %j : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    linalg.yield %vf : f32
  } -> tensor<600x64xf32>
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<600xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<600xf32>) -> tensor<600xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<600x64xf32>) outs(%fs : tensor<600xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<600xf32>
  %eyy = tensor.empty() : tensor<600x64xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<600x64xf32>, tensor<600xf32>) outs(%eyy : tensor<600x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<600x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c63 = arith.constant 63 : index
  %c300 = arith.constant 300 : index
  %c599 = arith.constant 599 : index
  %y00 = tensor.extract %y2[%c0, %c0] : tensor<600x64xf32>
  %y3005 = tensor.extract %y2[%c300, %c5] : tensor<600x64xf32>
  %y59963 = tensor.extract %y2[%c599, %c63] : tensor<600x64xf32>
  vector.print %y00 : f32
  vector.print %y3005 : f32
  vector.print %y59963 : f32

  %e3 = tensor.empty() : tensor<3x8x16xf32>
  %x3 = linalg.generic {indexing_maps = [#all3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e3 : tensor<3x8x16xf32>) {
  ^bb0(%o: f32):
    %r = linalg.index 0 : index
    %e = linalg.index 1 : index
    %c = linalg.index 2 : index
    %c1000 = arith.constant 1000 : index
    %c10 = arith.constant 10 : index
    %rr = arith.muli %r, %c1000 : index
    %ee = arith.muli %e, %c10 : index
    %re = arith.addi %rr, %ee : index
    %v = arith.addi %re, %c : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to f32
    linalg.yield %vf : f32
  } -> tensor<3x8x16xf32>
  %ey = tensor.empty() : tensor<3x16xf32>
  %fy = linalg.fill ins(%zero : f32) outs(%ey : tensor<3x16xf32>) -> tensor<3x16xf32>
  %y = linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x3 : tensor<3x8x16xf32>) outs(%fy : tensor<3x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<3x16xf32>
  %y15 = tensor.extract %y[%c1, %c5] : tensor<3x16xf32>
  %c2 = arith.constant 2 : index
  %c15 = arith.constant 15 : index
  %y215 = tensor.extract %y[%c2, %c15] : tensor<3x16xf32>
  vector.print %y15 : f32
  vector.print %y215 : f32
  return
}

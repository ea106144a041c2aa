// A product on the tensor cores whose reduced depth is known only at run
// time (a prompt's attention weights by its values, over a block of keys):
// the steps run to the depth and the staged tiles hold zeros past it. Here
// x[20, 48] and w[24, 48] (rows 96 bytes apart, so copied as 16-byte
// vectors) are multiplied over their first 37 columns: the chunk of
// columns 32 to 39 ends past the depth and is read element by element, the
// elements past 36 as zero; then over all 48. Exact integers (the sums in
// Python of the formulas above each function).
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s

// GPU-LABEL: gpu.func @project_{{[0-9]+}}_generic
// GPU: nvgpu.mma.sync

// sum_{k < 37} x w at (0, 0), (19, 23), (7, 13), (16, 8)
// CHECK: 0
// CHECK-NEXT: 2
// CHECK-NEXT: 19
// CHECK-NEXT: -40
// over all 48 at (0, 0), (19, 23)
// CHECK-NEXT: 16
// CHECK-NEXT: -1

#sk = affine_map<(s, k) -> (s, k)>
#x = affine_map<(s, n, k) -> (s, k)>
#w = affine_map<(s, n, k) -> (n, k)>
#y = affine_map<(s, n, k) -> (s, n)>

// x[s, k] = (3 s + k k) mod 7 - 3, w[n, k] = (5 n + 2 k) mod 9 - 4
func.func @inputs(%e: tensor<?x48xbf16>, %weights: index) -> tensor<?x48xbf16> {
  %r = linalg.generic {indexing_maps = [#sk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<?x48xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c9 = arith.constant 9 : index
    %c0 = arith.constant 0 : index
    %isW = arith.cmpi ne, %weights, %c0 : index
    %s3 = arith.muli %i, %c3 : index
    %kk = arith.muli %k, %k : index
    %tx = arith.addi %s3, %kk : index
    %mx = arith.remui %tx, %c7 : index
    %vx = arith.subi %mx, %c3 : index
    %n5 = arith.muli %i, %c5 : index
    %k2 = arith.muli %k, %c2 : index
    %tw = arith.addi %n5, %k2 : index
    %mw = arith.remui %tw, %c9 : index
    %vw = arith.subi %mw, %c4 : index
    %v = arith.select %isW, %vw, %vx : index
    %vi = arith.index_cast %v : index to i32
    %vf = arith.sitofp %vi : i32 to bf16
    linalg.yield %vf : bf16
  } -> tensor<?x48xbf16>
  return %r : tensor<?x48xbf16>
}

// y[s, n] = sum_{k < depth} x[s, k] w[n, k]
func.func @project(%x: tensor<?x?xbf16>, %w: tensor<24x?xbf16>) -> tensor<?x24xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %e = tensor.empty(%rows) : tensor<?x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x24xf32>) -> tensor<?x24xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x?xbf16>, tensor<24x?xbf16>) outs(%f : tensor<?x24xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x24xf32>
  return %y : tensor<?x24xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c13 = arith.constant 13 : index
  %c16 = arith.constant 16 : index
  %c19 = arith.constant 19 : index
  %c20 = arith.constant 20 : index
  %c23 = arith.constant 23 : index
  %c24 = arith.constant 24 : index
  %c37 = arith.constant 37 : index
  %c48 = arith.constant 48 : index
  %ex = tensor.empty(%c20) : tensor<?x48xbf16>
  %ew = tensor.empty(%c24) : tensor<?x48xbf16>
  %x = func.call @inputs(%ex, %c0) : (tensor<?x48xbf16>, index) -> tensor<?x48xbf16>
  %w0 = func.call @inputs(%ew, %c1) : (tensor<?x48xbf16>, index) -> tensor<?x48xbf16>
  %w = tensor.cast %w0 : tensor<?x48xbf16> to tensor<24x48xbf16>
  %xs = tensor.extract_slice %x[0, 0] [%c20, %c37] [1, 1] : tensor<?x48xbf16> to tensor<?x?xbf16>
  %ws = tensor.extract_slice %w[0, 0] [24, %c37] [1, 1] : tensor<24x48xbf16> to tensor<24x?xbf16>
  %y = func.call @project(%xs, %ws) : (tensor<?x?xbf16>, tensor<24x?xbf16>) -> tensor<?x24xf32>
  %y0 = tensor.extract %y[%c0, %c0] : tensor<?x24xf32>
  %y1 = tensor.extract %y[%c19, %c23] : tensor<?x24xf32>
  %y2 = tensor.extract %y[%c7, %c13] : tensor<?x24xf32>
  %y3 = tensor.extract %y[%c16, %c8] : tensor<?x24xf32>
  vector.print %y0 : f32
  vector.print %y1 : f32
  vector.print %y2 : f32
  vector.print %y3 : f32
  %xa = tensor.extract_slice %x[0, 0] [%c20, %c48] [1, 1] : tensor<?x48xbf16> to tensor<?x?xbf16>
  %wa = tensor.extract_slice %w[0, 0] [24, %c48] [1, 1] : tensor<24x48xbf16> to tensor<24x?xbf16>
  %z = func.call @project(%xa, %wa) : (tensor<?x?xbf16>, tensor<24x?xbf16>) -> tensor<?x24xf32>
  %z0 = tensor.extract %z[%c0, %c0] : tensor<?x24xf32>
  %z1 = tensor.extract %z[%c19, %c23] : tensor<?x24xf32>
  vector.print %z0 : f32
  vector.print %z1 : f32
  return
}

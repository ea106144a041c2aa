// Warp reductions on the emulated device: a bf16 GEMV whose rows are
// 16-byte aligned (each lane reads 8-element vectors), the same with rows
// that are not (element by element), a dot product of 525 elements (65
// vectors and a tail of 5) with no parallel loop, and a max. Each output
// is a warp's; its lanes' partials meet through shuffles, which the
// emulated device runs as exchanges between barriers. Exact integers.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" | FileCheck %s --check-prefix=GPU
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=32" | %mlir_runner | FileCheck %s
// RUN: linnet-opt %s --linnet-cuda-pipeline="device=emulated threads-per-block=64" | %mlir_runner | FileCheck %s

// GPU: gpu.func @gemv_0_generic
// GPU: vector.load {{.*}} {alignment = 16 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<8xbf16>
// GPU-COUNT-5: gpu.shuffle xor
// GPU: gpu.func @main_{{[0-9]+}}_generic(%{{.*}}: memref<5x300xf32>, %{{.*}}: memref<5xf32>)
// GPU: arith.maximumf
// GPU-COUNT-5: gpu.shuffle xor

// y[i] = sum_k ((i + k) mod 4) (k mod 3), K = 520 and 525.
// CHECK: 779
// CHECK-NEXT: 776
// CHECK-NEXT: 787
// sum_k (k mod 4) (k mod 3) over 525.
// CHECK-NEXT: 784
// max_k ((7 i + 13 k) mod 101 - k / 3) at i = 3.
// CHECK-NEXT: 97

#wk = affine_map<(i, k) -> (i, k)>
#xk = affine_map<(i, k) -> (k)>
#yi = affine_map<(i, k) -> (i)>
#k = affine_map<(k) -> (k)>
#none = affine_map<(k) -> ()>

func.func @weights(%e: tensor<300x?xbf16>) -> tensor<300x?xbf16> {
  %w = linalg.generic {indexing_maps = [#wk], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<300x?xbf16>) {
  ^bb0(%o: bf16):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %s = arith.addi %i, %k : index
    %m = arith.remui %s, %c4 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to bf16
    linalg.yield %mf : bf16
  } -> tensor<300x?xbf16>
  return %w : tensor<300x?xbf16>
}

func.func @thirds(%e: tensor<?xf32>) -> tensor<?xf32> {
  %x = linalg.generic {indexing_maps = [#k], iterator_types = ["parallel"]}
      outs(%e : tensor<?xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 0 : index
    %c3 = arith.constant 3 : index
    %m = arith.remui %k, %c3 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    linalg.yield %mf : f32
  } -> tensor<?xf32>
  return %x : tensor<?xf32>
}

func.func @gemv(%w: tensor<300x?xbf16>, %x: tensor<?xf32>) -> tensor<300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<300xf32>) -> tensor<300xf32>
  %y = linalg.generic {indexing_maps = [#wk, #xk, #yi], iterator_types = ["parallel", "reduction"]}
      ins(%w, %x : tensor<300x?xbf16>, tensor<?xf32>) outs(%f : tensor<300xf32>) {
  ^bb0(%a: bf16, %b: f32, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %p = arith.mulf %af, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<300xf32>
  return %y : tensor<300xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c299 = arith.constant 299 : index
  %c520 = arith.constant 520 : index
  %c525 = arith.constant 525 : index
  %e520 = tensor.empty(%c520) : tensor<300x?xbf16>
  %e525 = tensor.empty(%c525) : tensor<300x?xbf16>
  %x520e = tensor.empty(%c520) : tensor<?xf32>
  %x525e = tensor.empty(%c525) : tensor<?xf32>
  %w520 = func.call @weights(%e520) : (tensor<300x?xbf16>) -> tensor<300x?xbf16>
  %w525 = func.call @weights(%e525) : (tensor<300x?xbf16>) -> tensor<300x?xbf16>
  %x520 = func.call @thirds(%x520e) : (tensor<?xf32>) -> tensor<?xf32>
  %x525 = func.call @thirds(%x525e) : (tensor<?xf32>) -> tensor<?xf32>
  // Rows of 1040 bytes: aligned vectors. Rows of 1050: element by element.
  %y520 = func.call @gemv(%w520, %x520) : (tensor<300x?xbf16>, tensor<?xf32>) -> tensor<300xf32>
  %y525 = func.call @gemv(%w525, %x525) : (tensor<300x?xbf16>, tensor<?xf32>) -> tensor<300xf32>
  %y0 = tensor.extract %y520[%c0] : tensor<300xf32>
  %y299 = tensor.extract %y520[%c299] : tensor<300xf32>
  %y7 = tensor.extract %y525[%c7] : tensor<300xf32>
  vector.print %y0 : f32
  vector.print %y299 : f32
  vector.print %y7 : f32

  // A dot product: no parallel loop, one warp's output.
  %ed = tensor.empty() : tensor<525xbf16>
  %d4 = linalg.generic {indexing_maps = [#k], iterator_types = ["parallel"]}
      outs(%ed : tensor<525xbf16>) {
  ^bb0(%o: bf16):
    %k = linalg.index 0 : index
    %c4 = arith.constant 4 : index
    %m = arith.remui %k, %c4 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to bf16
    linalg.yield %mf : bf16
  } -> tensor<525xbf16>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %x525s = tensor.cast %x525 : tensor<?xf32> to tensor<525xf32>
  %dot = linalg.generic {indexing_maps = [#k, #k, #none], iterator_types = ["reduction"]}
      ins(%d4, %x525s : tensor<525xbf16>, tensor<525xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: bf16, %v: f32, %o: f32):
    %uf = arith.extf %u : bf16 to f32
    %p = arith.mulf %uf, %v : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %dv = tensor.extract %dot[] : tensor<f32>
  vector.print %dv : f32

  // A max over rows of 300, starting from -inf.
  %em = tensor.empty() : tensor<5x300xf32>
  %vals = linalg.generic {indexing_maps = [#wk], iterator_types = ["parallel", "parallel"]}
      outs(%em : tensor<5x300xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c101 = arith.constant 101 : index
    %c13 = arith.constant 13 : index
    %i7 = arith.muli %i, %c7 : index
    %k13 = arith.muli %k, %c13 : index
    %s = arith.addi %i7, %k13 : index
    %m = arith.remui %s, %c101 : index
    %third = arith.divui %k, %c3 : index
    %mi = arith.index_cast %m : index to i32
    %ti = arith.index_cast %third : index to i32
    %v = arith.subi %mi, %ti : i32
    %vf = arith.sitofp %v : i32 to f32
    linalg.yield %vf : f32
  } -> tensor<5x300xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %er = tensor.empty() : tensor<5xf32>
  %fr = linalg.fill ins(%ninf : f32) outs(%er : tensor<5xf32>) -> tensor<5xf32>
  %mx = linalg.generic {indexing_maps = [#wk, #yi], iterator_types = ["parallel", "reduction"]}
      ins(%vals : tensor<5x300xf32>) outs(%fr : tensor<5xf32>) {
  ^bb0(%val: f32, %o: f32):
    %r = arith.maximumf %o, %val : f32
    linalg.yield %r : f32
  } -> tensor<5xf32>
  %m3 = tensor.extract %mx[%c3] : tensor<5xf32>
  vector.print %m3 : f32
  return
}

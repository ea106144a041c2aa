// linnet-cuda-version-products alone: a function whose body holds a
// tensor-core product of a run-time row count (a shared function that a
// decode step calls with one row and a prompt with many) gets its work from
// that product on (with the fill of its accumulator) in an scf.if on the
// row count: below 16 a copy whose products are marked linnet.few_rows
// (warp reductions'), else the original ops. A product of a static row
// count, and one of fewer than 16 rows, keep one form.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-cuda-version-products))" | FileCheck %s

#x = affine_map<(s, n, k) -> (s, k)>
#w = affine_map<(s, n, k) -> (n, k)>
#y = affine_map<(s, n, k) -> (s, n)>
#sn = affine_map<(s, n) -> (s, n)>

// CHECK-LABEL: func.func @shared
// CHECK: tensor.empty
// CHECK: %[[ROWS:.*]] = tensor.dim %arg0,
// CHECK: %[[FEW:.*]] = arith.cmpi ult, %[[ROWS]], %c16
// CHECK: %[[R:.*]] = scf.if %[[FEW]] -> (tensor<?x64xbf16>) {
// CHECK:   linalg.fill
// CHECK:   linalg.generic {{.*}}"reduction"{{.*}} attrs = {linnet.few_rows}
// CHECK:   arith.truncf
// CHECK:   linalg.generic {{.*}}"reduction"{{.*}} attrs = {linnet.few_rows}
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   linalg.fill
// CHECK-NOT: linnet.few_rows
// CHECK:   scf.yield
// CHECK: }
// CHECK: return %[[R]]
func.func @shared(%x: tensor<?x32xbf16>, %w: tensor<64x32xbf16>, %v: tensor<64x64xbf16>) -> tensor<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %x, %c0 : tensor<?x32xbf16>
  %e = tensor.empty(%rows) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x32xbf16>, tensor<64x32xbf16>) outs(%f : tensor<?x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %eb = tensor.empty(%rows) : tensor<?x64xbf16>
  %h = linalg.generic {indexing_maps = [#sn, #sn], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x64xf32>) outs(%eb : tensor<?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x64xbf16>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %q = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %v : tensor<?x64xbf16>, tensor<64x64xbf16>) outs(%f2 : tensor<?x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %out = linalg.generic {indexing_maps = [#sn, #sn], iterator_types = ["parallel", "parallel"]}
      ins(%q : tensor<?x64xf32>) outs(%eb : tensor<?x64xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<?x64xbf16>
  return %out : tensor<?x64xbf16>
}

// CHECK-LABEL: func.func @prompt
// CHECK-NOT: scf.if
// CHECK-NOT: linnet.few_rows
// CHECK: return
func.func @prompt(%x: tensor<128x32xbf16>, %w: tensor<64x32xbf16>, %init: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<128x32xbf16>, tensor<64x32xbf16>) outs(%init : tensor<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  return %p : tensor<128x64xf32>
}

// CHECK-LABEL: func.func @step
// CHECK-NOT: scf.if
// CHECK: return
func.func @step(%x: tensor<1x32xbf16>, %w: tensor<64x32xbf16>, %init: tensor<1x64xf32>) -> tensor<1x64xf32> {
  %p = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<1x32xbf16>, tensor<64x32xbf16>) outs(%init : tensor<1x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %m = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x64xf32>
  return %p : tensor<1x64xf32>
}

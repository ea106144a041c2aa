// linnet-codegen-prepare alone: elementwise producers fuse into their single
// consumer where it reads each element once; a transpose (data movement)
// fuses into the matmul that reads it, which keeps the transposed map as a
// generic (MLIR 22's specialization would drop it); a computing producer
// read through a broadcasting map (a SiLU feeding the experts' down
// projection) stays a producer of its own instead of being recomputed per
// output column; a plain matmul becomes linalg.matmul.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-prepare))" | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @chain(%x: tensor<64x128xf32>, %y: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %x : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %r = linalg.exp ins(%s : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// CHECK-LABEL: func.func @linear
// CHECK-NOT: tensor<53x29xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[WT]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<37x53xf32>, tensor<29x53xf32>)
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @linear(%x: tensor<37x53xf32>, %w: tensor<29x53xf32>) -> tensor<37x29xf32> {
  %e = tensor.empty() : tensor<53x29xf32>
  %t = linalg.transpose ins(%w : tensor<29x53xf32>) outs(%e : tensor<53x29xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %t : tensor<37x53xf32>, tensor<53x29xf32>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul
func.func @matmul(%x: tensor<37x53xf32>, %w: tensor<53x29xf32>) -> tensor<37x29xf32> {
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<37x29xf32>
  %c = linalg.fill ins(%zero : f32) outs(%o : tensor<37x29xf32>) -> tensor<37x29xf32>
  %r = linalg.matmul ins(%x, %w : tensor<37x53xf32>, tensor<53x29xf32>) outs(%c : tensor<37x29xf32>) -> tensor<37x29xf32>
  return %r : tensor<37x29xf32>
}

#x3 = affine_map<(r, o, i) -> (r, i)>
#w3 = affine_map<(r, o, i) -> (o, i)>
#y3 = affine_map<(r, o, i) -> (r, o)>
// CHECK-LABEL: func.func @silu_into_reduction
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: math.exp
// CHECK: return
func.func @silu_into_reduction(%x: tensor<4x128xf32>, %w: tensor<64x128xf32>) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x128xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x128xf32>) outs(%e : tensor<4x128xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    %x1 = math.exp %n : f32
    %one = arith.constant 1.0 : f32
    %d = arith.addf %one, %x1 : f32
    %r = arith.divf %a, %d : f32
    linalg.yield %r : f32
  } -> tensor<4x128xf32>
  %z = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<4x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%o : tensor<4x64xf32>) -> tensor<4x64xf32>
  // Not a contraction (the product is squared): a plain reduction generic.
  %y = linalg.generic {indexing_maps = [#x3, #w3, #y3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s, %w : tensor<4x128xf32>, tensor<64x128xf32>) outs(%f : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %p : f32
    %t = arith.addf %acc, %q : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

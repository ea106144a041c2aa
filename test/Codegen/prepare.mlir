// linnet-codegen-prepare alone: elementwise producers fuse into their single
// consumer where it reads each element once; a transpose (data movement)
// fuses into the matmul that reads it, which keeps the transposed map as a
// generic (MLIR 22's specialization would drop it); a computing producer
// read through a broadcasting map (a SiLU feeding the experts' down
// projection) stays a producer of its own instead of being recomputed per
// output column; a plain matmul becomes linalg.matmul; an element of a
// tensor filled with one value (a fill, or a generic yielding a value from
// outside) is that value; an index computation fuses into every reader.
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

// CHECK-LABEL: func.func @uniform_elements
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[V:.*]]: f32)
// CHECK-DAG: %[[C:.*]] = arith.constant 1.131370e+01 : f32
// CHECK-NOT: tensor.extract
// CHECK: arith.divf %{{.*}}, %[[C]]
// CHECK: arith.mulf %{{.*}}, %[[V]]
func.func @uniform_elements(%x: tensor<8xf32>, %v: f32) -> tensor<8xf32> {
  %scale = arith.constant 11.3137 : f32
  %e0 = tensor.empty() : tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%e0 : tensor<f32>) {
  ^bb0(%o: f32):
    linalg.yield %scale : f32
  } -> tensor<f32>
  %d = tensor.extract %s[] : tensor<f32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%v : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %c2 = arith.constant 2 : index
  %w = tensor.extract %f[%c2] : tensor<4xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.divf %a, %d : f32
    %r = arith.mulf %q, %w : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// A constant made in the fill's body (codegen::uniformValue): the element
// is that constant, made where the element was read.
// CHECK-LABEL: func.func @uniform_constant_in_body
// CHECK-NOT: tensor.extract
// CHECK: %[[C:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: arith.mulf %{{.*}}, %[[C]]
func.func @uniform_constant_in_body(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e0 : tensor<4xf32>) {
  ^bb0(%o: f32):
    %quarter = arith.constant 0.25 : f32
    linalg.yield %quarter : f32
  } -> tensor<4xf32>
  %c1 = arith.constant 1 : index
  %d = tensor.extract %s[%c1] : tensor<4xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = arith.mulf %a, %d : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// A reshape of a static tensor to a constant shape (a block function's
// `reshape(y, [B, S, H])` where it was inlined with one row) becomes a
// collapse to one axis and an expansion: views, no shape read from memory.
// CHECK-LABEL: func.func @static_reshape
// CHECK-NOT: tensor.reshape
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x2048xf32> into tensor<2048xf32>
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [1, 1, 2048] : tensor<2048xf32> into tensor<1x1x2048xf32>
// CHECK: tensor.cast %[[ROWS]] : tensor<1x1x2048xf32> to tensor<?x?x2048xf32>
func.func @static_reshape(%x: tensor<1x2048xf32>) -> tensor<?x?x2048xf32> {
  %shape = arith.constant dense<[1, 1, 2048]> : tensor<3xindex>
  %any = tensor.cast %x : tensor<1x2048xf32> to tensor<?x2048xf32>
  %r = tensor.reshape %any(%shape) : (tensor<?x2048xf32>, tensor<3xindex>) -> tensor<?x?x2048xf32>
  return %r : tensor<?x?x2048xf32>
}

// A shape that does not hold the tensor's elements is left to the reshape's
// own verification at run time.
// CHECK-LABEL: func.func @mismatched_reshape
// CHECK: tensor.reshape
func.func @mismatched_reshape(%x: tensor<1x2048xf32>) -> tensor<?x?xf32> {
  %shape = arith.constant dense<[3, 2048]> : tensor<2xindex>
  %r = tensor.reshape %x(%shape) : (tensor<1x2048xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// An index computation (a parallel generic that reads no memory, from the
// loop indices alone: here `arange(E)`, then a router's "lower id" mask
// `reshape(ids, [1, E]) < reshape(ids, [E, 1])`) is fused into every reader,
// even one reading it through a broadcasting map, and one of several readers
// (the ids, into their doubling): the mask is a comparison in the ranks'
// loop, not an E x E buffer.
// CHECK-LABEL: func.func @index_computation
// CHECK-NOT: tensor<8x8xi1>
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.cmpi slt
// CHECK: linalg.index 0
// CHECK-NEXT: arith.index_cast
// CHECK-NEXT: arith.addi
// CHECK: return
#ij = affine_map<(i, j) -> (i, j)>
#j_of = affine_map<(i, j) -> (j)>
#i_of = affine_map<(i, j) -> (i)>
#k = affine_map<(k) -> (k)>
func.func @index_computation(%p: tensor<8xf32>) -> (tensor<8xi32>, tensor<8xi32>) {
  %e = tensor.empty() : tensor<8xi32>
  %ids = linalg.generic {indexing_maps = [#k], iterator_types = ["parallel"]} outs(%e : tensor<8xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    linalg.yield %c : i32
  } -> tensor<8xi32>
  %row = tensor.expand_shape %ids [[0, 1]] output_shape [1, 8] : tensor<8xi32> into tensor<1x8xi32>
  %col = tensor.expand_shape %ids [[0, 1]] output_shape [8, 1] : tensor<8xi32> into tensor<8x1xi32>
  %em = tensor.empty() : tensor<8x8xi1>
  %lower = linalg.generic {indexing_maps = [affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, 0)>, #ij], iterator_types = ["parallel", "parallel"]} ins(%row, %col : tensor<1x8xi32>, tensor<8x1xi32>) outs(%em : tensor<8x8xi1>) {
  ^bb0(%a: i32, %b: i32, %o: i1):
    %lt = arith.cmpi slt, %a, %b : i32
    linalg.yield %lt : i1
  } -> tensor<8x8xi1>
  %zero = arith.constant 0 : i32
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<8xi32>) -> tensor<8xi32>
  %ranks = linalg.generic {indexing_maps = [#ij, #j_of, #i_of, #i_of], iterator_types = ["parallel", "reduction"]} ins(%lower, %p, %p : tensor<8x8xi1>, tensor<8xf32>, tensor<8xf32>) outs(%acc : tensor<8xi32>) {
  ^bb0(%l: i1, %other: f32, %mine: f32, %o: i32):
    %eq = arith.cmpf oeq, %other, %mine : f32
    %tie = arith.andi %eq, %l : i1
    %gt = arith.cmpf ogt, %other, %mine : f32
    %ahead = arith.ori %gt, %tie : i1
    %n = arith.extui %ahead : i1 to i32
    %s = arith.addi %o, %n : i32
    linalg.yield %s : i32
  } -> tensor<8xi32>
  %twice = linalg.generic {indexing_maps = [#k, #k], iterator_types = ["parallel"]} ins(%ids : tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%a: i32, %o: i32):
    %d = arith.addi %a, %a : i32
    linalg.yield %d : i32
  } -> tensor<8xi32>
  return %ranks, %twice : tensor<8xi32>, tensor<8xi32>
}

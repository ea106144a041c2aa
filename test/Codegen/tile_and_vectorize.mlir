// linnet-codegen-tile-and-vectorize alone, configurations pinned: a dot
// product along a contiguous k (vector = [1, 1, 32]) carries its 32 lanes
// through the k loop as FMAs and reduces them once after it, the lanes
// without the unit dimensions of the iteration space (vector<32xf32>, not
// vector<1x1x32xf32>: a unit dimension innermost would make LLVM handle
// every lane alone); with a register tile of several rows and columns
// (vector = [4, 4, 16]) each row's and column's lanes are read once and
// broadcast to the 4x4 outputs; dynamic rows are split at the last multiple
// of 4, the whole tiles before it static (no row mask) and the rows after it
// (a decode's single row) taken one at a time (vector<4x16xf32>), and masked
// reads (k = 60 is no multiple of 16) are padded with zeros instead of the
// vectorizer's poison so that no contraction needs a mask; a matmul with
// an 8x16 register tile keeps its accumulator as a loop-carried
// vector<8x16xf32> around vector.contract. The configurations are removed.
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-tile-and-vectorize))" | FileCheck %s
// RUN: linnet-opt %s --pass-pipeline="builtin.module(func.func(linnet-codegen-tile-and-vectorize{vectorize=false}))" | FileCheck %s --check-prefix=SCALAR

// SCALAR-NOT: vector.
// SCALAR-NOT: linnet.lowering_config

#a = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @dot_products
// CHECK: %[[LANES:.*]]:4 = scf.for %{{.*}} = %c0 to %c256 step %c32 iter_args({{.*}}) -> ({{.*}}, vector<32xf32>)
// CHECK-NOT: vector.contract
// CHECK-NOT: vector.multi_reduction
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: scf.yield
// CHECK: %[[SPACE:.*]] = vector.shape_cast %[[LANES]]#3 : vector<32xf32> to vector<1x1x32xf32>
// CHECK: vector.multi_reduction <add>, %[[SPACE]], %{{.*}} [2] : vector<1x1x32xf32> to vector<1x1xf32>
// CHECK-NOT: linnet.lowering_config
func.func @dot_products(%x: tensor<2x256xf32>, %w: tensor<16x256xf32>, %acc: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %r = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [0, 0, 0], reduction = [0, 0, 0], vector = [1, 1, 32]>} ins(%x, %w : tensor<2x256xf32>, tensor<16x256xf32>) outs(%acc : tensor<2x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %p = arith.mulf %in, %in_0 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x16xf32>
  return %r : tensor<2x16xf32>
}

// CHECK-LABEL: func.func @dot_product_tile
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK: scf.for {{.*}} -> ({{.*}}, vector<4x4x16xf32>)
// CHECK-NOT: vector.mask
// CHECK: vector.transfer_read {{.*}}, %[[ZERO]], %{{.*}} {{.*}} : tensor<4x?xbf16>, vector<4x4x16xbf16>
// CHECK: vector.fma {{.*}} : vector<4x4x16xf32>
// CHECK: scf.yield
// CHECK: vector.multi_reduction <add>, {{.*}} [2] : vector<4x4x16xf32> to vector<4x4xf32>
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: vector.fma {{.*}} : vector<4x16xf32>
// CHECK: vector.multi_reduction <add>, {{.*}} [2] : vector<1x4x16xf32> to vector<1x4xf32>
// CHECK-NOT: linnet.lowering_config
func.func @dot_product_tile(%x: tensor<?x60xbf16>, %w: tensor<8x60xbf16>, %acc: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "parallel", "reduction"], linnet.lowering_config = #linnet.lowering_config<thread = [0, 0, 0], reduction = [0, 0, 0], vector = [4, 4, 16]>} ins(%x, %w : tensor<?x60xbf16>, tensor<8x60xbf16>) outs(%acc : tensor<?x8xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %xf = arith.extf %in : bf16 to f32
    %wf = arith.extf %in_0 : bf16 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @register_tile
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c16
// CHECK: scf.for {{.*}} -> ({{.*}}vector<8x16xf32>)
// CHECK: vector.contract {{.*}} into vector<8x16xf32>
// CHECK-NOT: linnet.lowering_config
func.func @register_tile(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>, %acc: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %r = linalg.matmul {linnet.lowering_config = #linnet.lowering_config<thread = [0, 0, 0], reduction = [0, 0, 0], vector = [8, 16, 1]>} ins(%a, %b : tensor<64x48xf32>, tensor<48x32xf32>) outs(%acc : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}

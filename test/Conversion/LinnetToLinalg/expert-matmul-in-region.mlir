// A routed matmul of a row per slot, static and of few slots (a decode's
// experts' down projection), with `keep-slot-products` stays a linnet op
// outside a region, for its consumer's region to take in a tile of it; one
// of a shared input row, or of dynamic rows, is lowered as before. With
// `slot-loops-in-regions` such a product inside a region (an scf.forall:
// the tile a consumer's region took in) is lowered as loops over its rows
// and slots there, one product each, not a forall in the forall; the
// results equal the numpy reference in Inputs/expert_matmul_in_region.py.
// RUN: sed -e '1,/^\/\/ -----/d' %s \
// RUN:   | linnet-opt --linnet-lower-to-linalg="keep-slot-products" --split-input-file \
// RUN:   | FileCheck %s --check-prefix=KEEP
// RUN: sed -n '1,/^\/\/ -----/p' %s > %t.main.mlir
// RUN: cat %t.main.mlir %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-lower-to-linalg="slot-loops-in-regions" \
// RUN:   | FileCheck %s --check-prefix=LOOPS
// RUN: cat %t.main.mlir %S/Inputs/generators.mlir \
// RUN:   | linnet-opt --linnet-lower-to-linalg="slot-loops-in-regions" \
// RUN:   | mlir-opt %lower-to-llvm | %run-main \
// RUN:   | %refpython %S/Inputs/expert_matmul_in_region.py | FileCheck %s

// LOOPS-LABEL: func.func @main
// LOOPS: scf.forall (%[[T:.*]]) in (2)
// LOOPS-NOT: scf.forall
// LOOPS: scf.for %[[R:[^ ]*]] = %c0 to %c3{{.*}} step %c1
// LOOPS: scf.for %[[J:[^ ]*]] = %c0 to %c2{{.*}} step %c1
// LOOPS: tensor.extract %{{.*}}[%[[R]], %[[J]]] : tensor<3x2xi32>
// LOOPS: linalg.generic
// LOOPS: tensor.insert_slice {{.*}}[%[[R]], %[[J]], 0] [1, 1, 2] [1, 1, 1] : tensor<2xf32> into tensor<3x2x2xf32>
// LOOPS: scf.forall.in_parallel
// CHECK: expert_matmul in a region, slots in loops: PASS

// R = 3 rows, K = 2 slots, In = 5, Out = 4 in two tiles of 2 (the region's
// forall), X = 3 experts; ids 3 and -1 give zero rows.
func.func @main() {
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %s2 = arith.constant 0.2 : f32
  %s3 = arith.constant 0.3 : f32
  %xk0 = call @sin_3d(%c3, %c2, %c5, %s2, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %w0 = call @sin_3d(%c3, %c4, %c5, %s3, %one, %zero)
      : (index, index, index, f32, f32, f32) -> tensor<?x?x?xf32>
  %xk = tensor.cast %xk0 : tensor<?x?x?xf32> to tensor<3x2x5xf32>
  %w = tensor.cast %w0 : tensor<?x?x?xf32> to tensor<3x4x5xf32>
  %experts = arith.constant dense<[[0, 2], [1, 3], [-1, 2]]> : tensor<3x2xi32>
  %empty = tensor.empty() : tensor<3x2x4xf32>
  %y = scf.forall (%t) in (2) shared_outs(%out = %empty) -> (tensor<3x2x4xf32>) {
    %first = affine.apply affine_map<(d0) -> (d0 * 2)>(%t)
    %wt = tensor.extract_slice %w[0, %first, 0] [3, 2, 5] [1, 1, 1]
        : tensor<3x4x5xf32> to tensor<3x2x5xf32>
    %tile = linnet.expert_matmul %xk, %wt, %experts
        : (tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<3x2xi32>) -> tensor<3x2x2xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %tile into %out[0, 0, %first] [3, 2, 2] [1, 1, 1]
          : tensor<3x2x2xf32> into tensor<3x2x4xf32>
    }
  }
  %printed = tensor.cast %y : tensor<3x2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%printed) : (tensor<*xf32>) -> ()
  return
}

// -----

// KEEP-LABEL: func.func @kept
// KEEP: linnet.expert_matmul {{.*}} : (tensor<1x8x16xbf16>, tensor<32x64x16xbf16>, tensor<1x8xi32>) -> tensor<1x8x64xbf16>
func.func @kept(%x: tensor<1x8x16xbf16>, %w: tensor<32x64x16xbf16>,
                %ids: tensor<1x8xi32>) -> tensor<1x8x64xbf16> {
  %y = linnet.expert_matmul %x, %w, %ids
      : (tensor<1x8x16xbf16>, tensor<32x64x16xbf16>, tensor<1x8xi32>) -> tensor<1x8x64xbf16>
  return %y : tensor<1x8x64xbf16>
}

// -----

// A shared input row, dynamic rows, and many slots for their experts (the
// grouped form) are lowered.
// KEEP-LABEL: func.func @lowered
// KEEP-NOT: linnet.expert_matmul
// KEEP: return
func.func @lowered(%x: tensor<1x16xbf16>, %xs: tensor<?x8x16xbf16>,
                   %xm: tensor<64x8x16xbf16>, %w: tensor<32x64x16xbf16>,
                   %ids: tensor<1x8xi32>, %dids: tensor<?x8xi32>,
                   %mids: tensor<64x8xi32>)
    -> (tensor<1x8x64xbf16>, tensor<?x8x64xbf16>, tensor<64x8x64xbf16>) {
  %y = linnet.expert_matmul %x, %w, %ids
      : (tensor<1x16xbf16>, tensor<32x64x16xbf16>, tensor<1x8xi32>) -> tensor<1x8x64xbf16>
  %z = linnet.expert_matmul %xs, %w, %dids
      : (tensor<?x8x16xbf16>, tensor<32x64x16xbf16>, tensor<?x8xi32>) -> tensor<?x8x64xbf16>
  %m = linnet.expert_matmul %xm, %w, %mids
      : (tensor<64x8x16xbf16>, tensor<32x64x16xbf16>, tensor<64x8xi32>) -> tensor<64x8x64xbf16>
  return %y, %z, %m : tensor<1x8x64xbf16>, tensor<?x8x64xbf16>, tensor<64x8x64xbf16>
}

// Canonicalization of linnet ops: a routed matmul reads an operand cast to
// a less static type (a decode's row passed to a mixture of experts
// written for any rows, then inlined) uncast, and its result gets the
// sizes that gives, cast back to the old type for its users; its
// attributes stay. A cast that loses nothing, or adds static sizes, stays.
// RUN: linnet-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @static_rows(
// CHECK-SAME: %[[X:.*]]: tensor<1x8x16xbf16>, %[[W:.*]]: tensor<32x64x16xbf16>, %[[IDS:.*]]: tensor<1x8xi32>)
// CHECK: %[[Y:.*]] = linnet.expert_matmul %[[X]], %[[W]], %[[IDS]] {keep} : (tensor<1x8x16xbf16>, tensor<32x64x16xbf16>, tensor<1x8xi32>) -> tensor<1x8x64xbf16>
// CHECK: %[[C:.*]] = tensor.cast %[[Y]] : tensor<1x8x64xbf16> to tensor<?x8x64xbf16>
// CHECK: return %[[C]]
func.func @static_rows(%x: tensor<1x8x16xbf16>, %w: tensor<32x64x16xbf16>,
                       %ids: tensor<1x8xi32>) -> tensor<?x8x64xbf16> {
  %xc = tensor.cast %x : tensor<1x8x16xbf16> to tensor<?x8x16xbf16>
  %ic = tensor.cast %ids : tensor<1x8xi32> to tensor<?x8xi32>
  %y = linnet.expert_matmul %xc, %w, %ic {keep}
      : (tensor<?x8x16xbf16>, tensor<32x64x16xbf16>, tensor<?x8xi32>) -> tensor<?x8x64xbf16>
  return %y : tensor<?x8x64xbf16>
}

// -----

// CHECK-LABEL: func.func @more_static_cast(
// CHECK: tensor.cast {{.*}} : tensor<?x16xbf16> to tensor<2x16xbf16>
// CHECK: linnet.expert_matmul {{.*}} : (tensor<2x16xbf16>, tensor<32x64x16xbf16>, tensor<2x8xi32>) -> tensor<2x8x64xbf16>
func.func @more_static_cast(%x: tensor<?x16xbf16>, %w: tensor<32x64x16xbf16>,
                            %ids: tensor<2x8xi32>) -> tensor<2x8x64xbf16> {
  %xc = tensor.cast %x : tensor<?x16xbf16> to tensor<2x16xbf16>
  %y = linnet.expert_matmul %xc, %w, %ids
      : (tensor<2x16xbf16>, tensor<32x64x16xbf16>, tensor<2x8xi32>) -> tensor<2x8x64xbf16>
  return %y : tensor<2x8x64xbf16>
}

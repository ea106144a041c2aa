// A prompt's attention whose configuration tiles its queries is left an op
// for the tensor cores (keep-prompt-attention); one they cannot take (f32,
// its configuration pinned in the input) is an error naming the op, not a
// kernel that leaves its output unwritten.
// RUN: not linnet-opt %s --linnet-cuda-pipeline="stop-after=kernels" 2>&1 | FileCheck %s
// CHECK: error: 'linnet.attention' op is kept for the tensor cores but has no tensor-core form
func.func @prompt(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x64x16xf32>,
                  %v: tensor<1x2x64x16xf32>, %offset: tensor<1xi32>,
                  %scale: f32) -> tensor<1x4x?x16xf32> {
  %c2 = arith.constant 2 : index
  %s = tensor.dim %q, %c2 : tensor<1x4x?x16xf32>
  %init = tensor.empty(%s) : tensor<1x4x?x16xf32>
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init
      {linnet.lowering_config = #linnet.lowering_config<
          thread = [1, 1, 64], reduction = [0, 0, 0], vector = [0, 0, 0]>}
      : (tensor<1x4x?x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>,
         tensor<1xi32>, f32, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %0 : tensor<1x4x?x16xf32>
}

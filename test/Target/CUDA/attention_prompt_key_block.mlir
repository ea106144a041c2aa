// linnet-cuda-pipeline's attention-prompt-key-block: the keys a block of a
// prompt's attention (its query count a run-time size) takes in the loop of
// its online softmax; 1024 by default, 0 for the lowering's 256; a negative
// count is the lowering's error.
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg" | FileCheck %s --check-prefix=DEFAULT
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg attention-prompt-key-block=32" | FileCheck %s --check-prefix=SET
// RUN: linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg attention-prompt-key-block=0" | FileCheck %s --check-prefix=ZERO
// RUN: not linnet-opt %s --linnet-cuda-pipeline="stop-after=linalg attention-prompt-key-block=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// DEFAULT: affine_map<()[s0, s1] -> (1024, s0 - s1)>
// DEFAULT: scf.for {{.*}} step %c1024 iter_args
// SET: affine_map<()[s0, s1] -> (32, s0 - s1)>
// SET: scf.for {{.*}} step %c32 iter_args
// ZERO: affine_map<()[s0, s1] -> (256, s0 - s1)>
// ZERO: scf.for {{.*}} step %c256 iter_args
// NEGATIVE: error: attention-prompt-key-block must be 0 or more
func.func @prompt(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x64x16xf32>,
                  %v: tensor<1x2x64x16xf32>, %offset: tensor<1xi32>,
                  %scale: f32) -> tensor<1x4x?x16xf32> {
  %init_0_c2 = arith.constant 2 : index
  %init_0_d2 = tensor.dim %q, %init_0_c2 : tensor<1x4x?x16xf32>
  %init_0 = tensor.empty(%init_0_d2) : tensor<1x4x?x16xf32>
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<1x4x?x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>,
         tensor<1xi32>, f32, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %0 : tensor<1x4x?x16xf32>
}

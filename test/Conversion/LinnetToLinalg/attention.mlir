// linnet.attention becomes a loop over blocks of keys (attention-key-block,
// default 256; 2 here, so 5 keys take three blocks) with an online softmax:
// each block's scores, mask, block max, the rescaling exp(oldMax - newMax) of
// what the earlier blocks summed, exp weights, block sum and weighted sum,
// over the query heads viewed as [Hk, G]; the carried max, sum and
// accumulator are updated in their own tensors. After the loop, a normalizing
// round to the element type. Only the keys and values some query can attend
// to are read: the first min(L, max_b offset[b] + S) positions, and a block
// works on the queries from first - max_b offset[b] on (those before it see
// none of its keys, and what they carry would not change): about half the
// queries over a prompt's blocks.
// RUN: linnet-opt %s --linnet-lower-to-linalg="attention-key-block=2" | FileCheck %s
// With attention-rounded-weights (the CUDA target's) a prompt's masked
// scores are rounded to the values' bf16 (as HF rounds q k^T), which the
// max and the exponent read back in f32, and its weights too, summed as
// they are and multiplied by the values as two bf16 operands (a
// tensor-core product).
// RUN: linnet-opt %s --linnet-lower-to-linalg="attention-key-block=2 attention-rounded-weights" | FileCheck %s --check-prefix=ROUNDED
// attention-prompt-key-block sets the block where there are several queries
// (a prompt's; the CUDA target's 1024) and leaves a decode step's one query
// at attention-key-block:
// RUN: linnet-opt %s --linnet-lower-to-linalg="attention-key-block=2 attention-prompt-key-block=3" | FileCheck %s --check-prefix=PROMPT
// PROMPT-DAG: #[[PROMPTBLOCK:.*]] = affine_map<()[s0, s1] -> (3, s0 - s1)>
// PROMPT-DAG: #[[DECODEBLOCK:.*]] = affine_map<()[s0, s1] -> (2, s0 - s1)>
// PROMPT-LABEL: func.func @attention(
// PROMPT: scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c3
// PROMPT: affine.min #[[PROMPTBLOCK]]()[%{{.*}}, %[[FIRST]]]
// PROMPT-LABEL: func.func @attention_decode(
// PROMPT: scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c2
// PROMPT: affine.min #[[DECODEBLOCK]]()[%{{.*}}, %[[FIRST]]]
// RUN: not linnet-opt %s --linnet-lower-to-linalg="attention-prompt-key-block=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: attention-prompt-key-block must be 0 or more
// ROUNDED-LABEL: func.func @attention(
// ROUNDED: %[[SCORES:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x2x?x?xf32>)
// ROUNDED: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[SCORES]], {{.*}} outs(%{{.*}} : tensor<2x2x2x?x?xbf16>)
// ROUNDED: arith.select
// ROUNDED: arith.truncf %{{.*}} : f32 to bf16
// ROUNDED: linalg.generic {{.*}} ins(%[[MASKED]] : tensor<2x2x2x?x?xbf16>) outs(%{{.*}} : tensor<2x2x2x?xf32>)
// ROUNDED: arith.extf %{{.*}} : bf16 to f32
// ROUNDED: arith.maximumf
// ROUNDED: %[[WEIGHTS:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %{{.*}} outs(%{{.*}} : tensor<2x2x2x?x?xbf16>)
// ROUNDED: arith.extf %{{.*}} : bf16 to f32
// ROUNDED: math.exp
// ROUNDED: arith.truncf %{{.*}} : f32 to bf16
// ROUNDED: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[WEIGHTS]] : tensor<2x2x2x?x?xbf16>)
// ROUNDED: arith.extf %{{.*}} : bf16 to f32
// ROUNDED: linalg.generic {{.*}} ins(%[[WEIGHTS]], %{{.*}} : tensor<2x2x2x?x?xbf16>, tensor<2x2x?x6xbf16>) outs(%{{.*}} : tensor<2x2x2x?x6xf32>)
// ROUNDED: arith.extf %{{.*}} : bf16 to f32
// ROUNDED: arith.extf %{{.*}} : bf16 to f32

// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-DAG: #[[SCORES:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d5, d4)>
// CHECK-DAG: #[[BLOCK:.*]] = affine_map<()[s0, s1] -> (2, s0 - s1)>
// CHECK-DAG: #[[BEFORE:.*]] = affine_map<(d0, d1)[s0] -> (d0 - d1, s0)>
// CHECK-DAG: #[[ATLEAST0:.*]] = affine_map<(d0) -> (d0, 0)>

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[QUERY:.*]]: tensor<2x4x3x8xbf16>, %[[KEY:.*]]: tensor<2x2x5x8xbf16>, %[[VALUE:.*]]: tensor<2x2x5x6xbf16>, %[[OFFSET:.*]]: tensor<2xi32>, %[[SCALE:.*]]: f32, %[[LENGTHS:.*]]: tensor<2xi32>)
func.func @attention(%q: tensor<2x4x3x8xbf16>, %k: tensor<2x2x5x8xbf16>,
                     %v: tensor<2x2x5x6xbf16>, %offset: tensor<2xi32>,
                     %scale: f32, %lengths: tensor<2xi32>)
    -> tensor<2x4x3x6xbf16> {
  %init_0 = tensor.empty() : tensor<2x4x3x6xbf16>
  // CHECK-NOT: linnet.
  // CHECK: %[[GROUPED:.*]] = tensor.expand_shape %[[QUERY]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 3, 8]
  // CHECK: %[[LARGEST:.*]] = scf.for {{.*}} iter_args
  // CHECK: tensor.extract %[[OFFSET]]
  // CHECK: arith.maxsi
  // CHECK: %[[END:.*]] = arith.addi %[[LARGEST]], %c3
  // CHECK: %[[COUNT:.*]] = arith.minsi %{{.*}}, %c5
  // CHECK: %[[BLOCKS:.*]]:3 = scf.for %[[FIRST:.*]] = %{{.*}} to %[[COUNT]] step %[[STEP:.*]] iter_args(%[[CARRIEDMAX:.*]] = %{{.*}}, %[[CARRIEDSUM:.*]] = %{{.*}}, %[[CARRIEDACC:.*]] = %{{.*}}) -> (tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x3x6xf32>)
  // The first query the block works on: max(0, min(S, first - largest)).
  // CHECK: %[[MIN:.*]] = affine.min #[[BEFORE]](%[[FIRST]], %[[LARGEST]])[%{{.*}}]
  // CHECK: %[[QSTART:.*]] = affine.max #[[ATLEAST0]](%[[MIN]])
  // CHECK: %[[QCOUNT:.*]] = arith.subi %{{.*}}, %[[QSTART]]
  // CHECK: %[[QUERIES:.*]] = tensor.extract_slice %[[GROUPED]][0, 0, 0, %[[QSTART]], 0] [2, 2, 2, %[[QCOUNT]], 8]
  // CHECK: %[[OLDMAX:.*]] = tensor.extract_slice %[[CARRIEDMAX]][0, 0, 0, %[[QSTART]]] [2, 2, 2, %[[QCOUNT]]]
  // CHECK: %[[OLDSUM:.*]] = tensor.extract_slice %[[CARRIEDSUM]][0, 0, 0, %[[QSTART]]] [2, 2, 2, %[[QCOUNT]]]
  // CHECK: %[[OLDACC:.*]] = tensor.extract_slice %[[CARRIEDACC]][0, 0, 0, %[[QSTART]], 0] [2, 2, 2, %[[QCOUNT]], 6]
  // The block's key count an affine.min, so that its bound (2) is known.
  // CHECK: %[[N:.*]] = affine.min #[[BLOCK]]()[%[[COUNT]], %[[FIRST]]]
  // CHECK: %[[KEYS:.*]] = tensor.extract_slice %[[KEY]][0, 0, %[[FIRST]], 0] [2, 2, %[[N]], 8] [1, 1, 1, 1] : tensor<2x2x5x8xbf16> to tensor<2x2x?x8xbf16>
  // CHECK: %[[VALUES:.*]] = tensor.extract_slice %[[VALUE]][0, 0, %[[FIRST]], 0] [2, 2, %[[N]], 6] [1, 1, 1, 1] : tensor<2x2x5x6xbf16> to tensor<2x2x?x6xbf16>
  // CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[SCORES]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
  // CHECK-SAME: ins(%[[QUERIES]], %[[KEYS]] : {{.*}}) outs({{.*}} : tensor<2x2x2x?x?xf32>)
  // CHECK: arith.extf
  // CHECK: %[[MASKED:.*]] = linalg.generic {indexing_maps = [#[[ID5]], #[[ROW]], #[[ROW]], #[[ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
  // CHECK-SAME: ins(%[[S]], %[[OFFSET]], %[[LENGTHS]]
  // CHECK: linalg.index 3
  // CHECK: arith.addi %[[QSTART]]
  // CHECK: linalg.index 4
  // CHECK: arith.addi %[[FIRST]]
  // CHECK: arith.mulf %{{.*}}, %[[SCALE]]
  // CHECK: %[[BLOCKMAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[MASKED]]
  // CHECK: arith.maximumf
  // CHECK: %[[RESCALE:.*]] = linalg.generic {{.*}} ins(%[[OLDMAX]], %[[BLOCKMAX]] :
  // CHECK: math.exp
  // CHECK: %[[NEWMAX:.*]] = linalg.generic {{.*}} ins(%[[BLOCKMAX]] : {{.*}}) outs(%[[OLDMAX]] :
  // CHECK: %[[WEIGHTS:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[NEWMAX]]
  // CHECK: math.exp
  // CHECK: %[[BLOCKSUM:.*]] = linalg.generic {{.*}} ins(%[[WEIGHTS]] :
  // CHECK: %[[NEWSUM:.*]] = linalg.generic {{.*}} ins(%[[RESCALE]], %[[BLOCKSUM]] : {{.*}}) outs(%[[OLDSUM]] :
  // CHECK: %[[BLOCKACC:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[V]], #[[SCORES]]]
  // CHECK-SAME: ins(%[[WEIGHTS]], %[[VALUES]] :
  // CHECK: %[[NEWACC:.*]] = linalg.generic {{.*}} ins(%[[RESCALE]], %[[BLOCKACC]] : {{.*}}) outs(%[[OLDACC]] :
  // CHECK: %[[PUTMAX:.*]] = tensor.insert_slice %[[NEWMAX]] into %[[CARRIEDMAX]][0, 0, 0, %[[QSTART]]]
  // CHECK: %[[PUTSUM:.*]] = tensor.insert_slice %[[NEWSUM]] into %[[CARRIEDSUM]][0, 0, 0, %[[QSTART]]]
  // CHECK: %[[PUTACC:.*]] = tensor.insert_slice %[[NEWACC]] into %[[CARRIEDACC]][0, 0, 0, %[[QSTART]], 0]
  // CHECK: scf.yield %[[PUTMAX]], %[[PUTSUM]], %[[PUTACC]]
  // CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[BLOCKS]]#2, %[[BLOCKS]]#1 : {{.*}}) outs(%{{.*}} : tensor<2x2x2x3x6xbf16>)
  // CHECK: arith.divf
  // CHECK: arith.truncf %{{.*}} : f32 to bf16
  // CHECK: %[[RESULT:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x2x2x3x6xbf16> into tensor<2x4x3x6xbf16>
  // CHECK: return %[[RESULT]]
  %0 = linnet.attention %q, %k, %v, %offset, %scale lengths %lengths into %init_0
      : (tensor<2x4x3x8xbf16>, tensor<2x2x5x8xbf16>, tensor<2x2x5x6xbf16>,
         tensor<2xi32>, f32, tensor<2xi32>, tensor<2x4x3x6xbf16>) -> tensor<2x4x3x6xbf16>
  return %0 : tensor<2x4x3x6xbf16>
}

// Dynamic query heads: the group size G = Hq / Hk is computed at run time.
// CHECK-LABEL: func.func @attention_dynamic
func.func @attention_dynamic(%q: tensor<?x?x?x64xf32>, %k: tensor<?x2x?x64xf32>,
                             %v: tensor<?x2x?x64xf32>, %offset: tensor<?xi32>,
                             %scale: f32) -> tensor<?x?x?x64xf32> {
  %init_0_c0 = arith.constant 0 : index
  %init_0_d0 = tensor.dim %q, %init_0_c0 : tensor<?x?x?x64xf32>
  %init_0_c1 = arith.constant 1 : index
  %init_0_d1 = tensor.dim %q, %init_0_c1 : tensor<?x?x?x64xf32>
  %init_0_c2 = arith.constant 2 : index
  %init_0_d2 = tensor.dim %q, %init_0_c2 : tensor<?x?x?x64xf32>
  %init_0 = tensor.empty(%init_0_d0, %init_0_d1, %init_0_d2) : tensor<?x?x?x64xf32>
  // CHECK: %[[G:.*]] = arith.divui %{{.*}}, %c2
  // CHECK: tensor.expand_shape {{.*}} output_shape [%{{.*}}, 2, %[[G]], %{{.*}}, 64] : tensor<?x?x?x64xf32> into tensor<?x2x?x?x64xf32>
  // CHECK-NOT: linnet.
  // CHECK: tensor.collapse_shape {{.*}} : tensor<?x2x?x?x64xf32> into tensor<?x?x?x64xf32>
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<?x?x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>,
         tensor<?xi32>, f32, tensor<?x?x?x64xf32>) -> tensor<?x?x?x64xf32>
  return %0 : tensor<?x?x?x64xf32>
}

// A decode step's one query a row (and the keys of a cache).
// CHECK-LABEL: func.func @attention_decode
func.func @attention_decode(%q: tensor<1x4x1x8xbf16>, %k: tensor<1x2x5x8xbf16>,
                            %v: tensor<1x2x5x6xbf16>, %offset: tensor<1xi32>,
                            %scale: f32) -> tensor<1x4x1x6xbf16> {
  %init_0 = tensor.empty() : tensor<1x4x1x6xbf16>
  // CHECK-NOT: linnet.
  %0 = linnet.attention %q, %k, %v, %offset, %scale into %init_0
      : (tensor<1x4x1x8xbf16>, tensor<1x2x5x8xbf16>, tensor<1x2x5x6xbf16>,
         tensor<1xi32>, f32, tensor<1x4x1x6xbf16>) -> tensor<1x4x1x6xbf16>
  return %0 : tensor<1x4x1x6xbf16>
}

//===- LinnetToLinalg.h - linnet to linalg patterns -------------*- C++ -*-===//
//
// Entry point for the patterns that lower linnet operations to linalg,
// tensor and scf on tensors, so pipelines can combine them with others.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CONVERSION_LINNETTOLINALG_LINNETTOLINALG_H
#define LINNET_CONVERSION_LINNETTOLINALG_LINNETTOLINALG_H

#include "mlir/IR/PatternMatch.h"

#include <cstdint>

namespace linnet {

/// The attribute name (a unit attribute) of an `scf.if` a lowering builds to
/// choose between two forms of an op at run time: the rest of its block may
/// take both forms with it (Codegen's `linnet-codegen-version-tails`).
inline constexpr llvm::StringLiteral kFormChoiceName = "linnet.form_choice";

/// How a routed matmul (`linnet.expert_matmul`) is lowered.
struct ExpertMatmulOptions {
  /// Outputs of a product per forall iteration (0: all of an expert's),
  /// which spreads a decode's few slots over a GPU's blocks; the grouped
  /// form's tiles likewise.
  int64_t outputTile = 0;
  /// Rows of a tile of the grouped form (slots sorted by expert); fewer
  /// where the slots are static and few an expert (at least 16 then).
  int64_t groupRows = 8;
  /// Outputs of a grouped form's tile of `groupRows` rows per forall
  /// iteration (0: `outputTile`): a prompt's tiles on a GPU's tensor cores
  /// (128 x 128), wider than a decode's, whose few slots want many blocks.
  int64_t groupOutputTile = 0;
  /// Slots an expert, on average, from which the grouped form is taken
  /// (each expert's weights read once a tile instead of once a slot).
  double groupedSlotsPerExpert = 4;
  /// Sort the slots with parallel linalg ops (a GPU's kernels) instead of
  /// loops over the slots (the host's, on a GPU).
  bool parallelSort = false;
  /// Lower a product inside a region (a tile its consumer's region took in)
  /// as loops over its slots there.
  bool slotLoopsInRegions = false;
};

/// How attention is lowered.
struct AttentionOptions {
  /// Keys a block (its scores take that many keys of memory per query, not
  /// the whole cache).
  int64_t keyBlock = 256;
  /// Keys a block where the op has several queries (a prompt's), 0 for
  /// `keyBlock`: each block rescales the sums of every query it sees, so
  /// fewer, larger blocks read and write them fewer times.
  int64_t promptKeyBlock = 0;
  /// Round a prompt's masked scores (as HF's bf16 product of q and k) and
  /// weights (the softmax's numerators) to the values' element type, the
  /// weights before they multiply the values, as HF rounds its softmax to
  /// the activations' type: a product of two bf16 operands, which a GPU's
  /// tensor cores take, and half the bytes of a block's scores.
  bool roundedWeights = false;
};

/// Adds one rewrite pattern per linnet operation; each replaces its operation
/// by upstream operations on tensors. Attention as `attention` says; routed
/// matmuls as `experts` says.
void populateLinnetToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    const AttentionOptions &attention = {},
                                    const ExpertMatmulOptions &experts = {});

} // namespace linnet

#endif // LINNET_CONVERSION_LINNETTOLINALG_LINNETTOLINALG_H

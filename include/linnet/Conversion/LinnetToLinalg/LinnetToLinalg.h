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

/// Adds one rewrite pattern per linnet operation; each replaces its operation
/// by upstream operations on tensors. Attention reads the keys in blocks of
/// `attentionKeyBlock` (its scores take that many keys of memory per query,
/// not the whole cache). A routed matmul with a product per slot computes
/// `expertOutputTile` outputs per iteration of its forall (0: all of an
/// expert's), which spreads a decode's few slots over a GPU's blocks, and
/// so does each tile of `expertGroupRows` sorted rows of its grouped form
/// (a prompt's); with `slotLoopsInRegions` one inside a region (a tile its
/// consumer's region took in) loops over its slots there instead.
void populateLinnetToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    int64_t attentionKeyBlock = 256,
                                    int64_t expertOutputTile = 0,
                                    int64_t expertGroupRows = 8,
                                    bool slotLoopsInRegions = false);

} // namespace linnet

#endif // LINNET_CONVERSION_LINNETTOLINALG_LINNETTOLINALG_H

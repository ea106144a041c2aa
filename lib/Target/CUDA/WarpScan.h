//===- WarpScan.h - a prompt's delta rule, a value column a warp ----------===//
//
// The delta rule is a scan over a prompt's tokens; each column v of a
// head's [K, V] state evolves on its own. Run as linalg ops in a block, a
// token took several barriers and sums of K products in one thread each,
// and on the host's side of a kernel it was a launch a token and layer.
// Here a column is a warp's: lane l keeps rows l, l + 32, ... of the column
// in registers for the whole prompt, each token's three dot products (the
// state with the key and the query, the key with the query) are the lanes'
// partial sums combined by five butterfly shuffles, and the next token's
// key, query and gates are loaded while this one's are used. No barrier, no
// shared memory; the state is read once and written once.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_WARPSCAN_H
#define LINNET_LIB_TARGET_CUDA_WARPSCAN_H

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/IR/PatternMatch.h"

namespace linnet {

/// Replaces `op` (a `linnet.delta_rule` on buffers, a block's tile of it)
/// by code every thread of a block of `threadsPerBlock` threads runs, with
/// `thread` its id: the tile's columns (row, head, value column) dealt out
/// to the warps, each warp scanning its column over every token. Fails
/// where the key size is not static.
mlir::LogicalResult lowerDeltaRuleToWarps(mlir::RewriterBase &rewriter,
                                          DeltaRuleOp op, mlir::Value thread,
                                          int64_t threadsPerBlock);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_WARPSCAN_H

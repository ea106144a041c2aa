//===- WarpScan.h - a prompt's delta rule, a value column 8 lanes ---------===//
//
// The delta rule is a scan over a prompt's tokens; each column v of a
// head's [K, V] state evolves on its own. Run as linalg ops in a block, a
// token took several barriers and sums of K products in one thread each,
// and on the host's side of a kernel it was a launch a token and layer.
// Here a column is eight lanes': lane l of the column keeps its rows
// l R .. l R + R - 1 (R = K / 8) in registers for the whole prompt, each
// token's dot products (the state with the key and with the query) are the
// lanes' partial sums (fused multiply-adds) combined by three butterfly
// shuffle stages, and the next token's key, query and
// gates are loaded while this one's are used, R consecutive elements a
// lane (16-byte loads where the rows allow). The key's product with the
// query, the same for a head's columns, the block sums once for a window
// of tokens into workgroup memory (two barriers a window); the state is
// read once and written once.
//
// Why eight lanes, not a warp: a token's instructions are then about a
// quarter a column (a warp's 32 lanes each kept 4 rows of one column and ran
// 15 shuffles and 15 adds a token for it, and the scan, a fixed chain a
// token, is bound by how many instructions the multiprocessors issue), and
// a head's 128 columns are still 4 blocks of 256 threads, one a
// multiprocessor at full size.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_WARPSCAN_H
#define LINNET_LIB_TARGET_CUDA_WARPSCAN_H

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/IR/PatternMatch.h"

namespace linnet {

/// Lanes that share one value column of the scan (a power of two, at most
/// a warp): a block of T threads scans T / kScanLanesPerColumn columns at
/// once.
inline constexpr int64_t kScanLanesPerColumn = 8;

/// A lane keeps its rows of the state over a scale, the product of the
/// decays since the scale was last 1, so that a token's decay is one
/// multiply, not one a row. Where the scale falls below this (2^-64), it
/// goes into the rows and is 1 again: the rows stay within 2^64 of the
/// state, far from f32's limits, and a decay that flushes the scale to 0
/// zeroes the rows, as it does the state.
inline constexpr double kLeastScanScale = 0x1p-64;

/// Passes of a block's groups of lanes over a window of tokens: a window
/// is kScanWindowPasses tokens a group (64 at 256 threads). At full size
/// (measured before the loops stopped at the row's length) a window's
/// products cost 2.8 instructions a token and warp at 2 passes and 3.9 at
/// 1; at 4, ptxas took 255 registers and the token loop 7% more.
inline constexpr int64_t kScanWindowPasses = 2;

/// The workgroup buffer of a window's products k_t . q_t for `op` (a block's
/// tile of a `linnet.delta_rule` on buffers) run by `threadsPerBlock`
/// threads, where every column of the tile is of one row and head (the
/// CUDA target's tiles): those products are each summed once a block, not
/// once a column. Null otherwise: the scan has no form for such a tile.
mlir::MemRefType scanWindowType(DeltaRuleOp op, int64_t threadsPerBlock);

/// Replaces `op` (a `linnet.delta_rule` on buffers, a block's tile of it)
/// by code every thread of a block of `threadsPerBlock` threads runs, with
/// `thread` its id: the tile's columns (row, head, value column) dealt out
/// to groups of kScanLanesPerColumn lanes, each group scanning its column
/// over the row's tokens. `window` is a buffer of scanWindowType. Fails
/// where the key size is not static or `window` is null.
mlir::LogicalResult lowerDeltaRuleToWarps(mlir::RewriterBase &rewriter,
                                          DeltaRuleOp op, mlir::Value thread,
                                          int64_t threadsPerBlock,
                                          mlir::Value window);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_WARPSCAN_H

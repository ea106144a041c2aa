//===- TensorCoreAttention.h - a prompt's attention in one kernel ---------===//
//
// As linalg ops a prompt's attention is six kernels a block of keys, each
// writing or reading the block's scores for every query that sees it: at an
// 8k prompt a third of a prefill's bytes. Here a GPU block takes 64 queries
// of one head and walks the keys 16 at a time with an online softmax (flash
// attention): the queries' fragments stay in registers, each step's keys and
// values are staged in workgroup memory, the scores of 16 rows by 16 keys
// are one warp's two `mma.sync` accumulators, which become the A fragment of
// their product with the values without leaving the registers, and the
// output leaves the block once. The scores and weights are rounded to bf16
// as the linalg form's `attention-rounded-weights` rounds them (a weight is
// rounded against the running maximum, then rescaled in f32, as the linalg
// form does a block of keys: here every 16 keys).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_TENSORCOREATTENTION_H
#define LINNET_LIB_TARGET_CUDA_TENSORCOREATTENTION_H

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/IR/PatternMatch.h"

#include <array>

namespace linnet {

/// Queries a block takes: 16 a warp along the rows, four such warps (the
/// others split the value columns).
inline constexpr int64_t kAttentionQueryTile = 64;
/// Keys a block stages a step: the depth of one `mma.sync` of the weights
/// and the values.
inline constexpr int64_t kAttentionKeyStep = 16;

/// Whether `op` (on tensors or buffers) runs as tensor-core attention in
/// blocks of `threadsPerBlock` threads: bf16, several queries (not a
/// decode step's one), a key depth that is a multiple of 16 and value
/// columns that split into pairs of 8s among the block's column warps
/// (threadsPerBlock / 128; a pair is one transposed ldmatrix), static both, a
/// block of whole groups of 4 warps, and query fragments and accumulators that
/// a lane keeps in 128 registers (a depth and value columns of 256 at 256
/// threads a block).
bool matchTensorCoreAttention(AttentionOp op, int64_t threadsPerBlock);

/// The workgroup buffers such an op stages a step of keys and of values in:
/// bf16, kAttentionKeyStep rows of its depth and of its value columns, each
/// row 8 elements longer (16-byte aligned rows whose fragments fall in
/// different banks).
std::array<mlir::MemRefType, 2> tensorCoreAttentionStageTypes(AttentionOp op);

/// Replaces `op` (on buffers, a block's tile of queries) by code every
/// thread of a block of `threadsPerBlock` threads runs, `thread` its id,
/// `stages` workgroup buffers of tensorCoreAttentionStageTypes. For each row,
/// head and 64 queries of the tile, warp w takes query rows 16 (w mod 4) on and
/// value columns (w / 4) Dv / (threadsPerBlock / 128) on; every step of 16 keys
/// (up to the last the tile's queries may see) the block stages the keys
/// and values, each warp computes its 16 x 16 scores, masks and rounds
/// them, updates its rows' running maximum and sum (four lanes share a row:
/// two shuffles), rescales its accumulators (where a row's maximum moved)
/// and adds the rounded weights' product with the values (their fragments
/// by transposed ldmatrix); a step no mask touches skips the masks. Every
/// thread runs the loops alike, so each barrier, shuffle and mma.sync sees
/// whole warps.
mlir::LogicalResult
lowerAttentionToTensorCores(mlir::RewriterBase &rewriter, AttentionOp op,
                            mlir::Value thread, int64_t threadsPerBlock,
                            llvm::ArrayRef<mlir::Value> stages);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_TENSORCOREATTENTION_H

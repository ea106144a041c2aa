//===- TensorCoreMatmul.h - matrix products on the tensor cores -----------===//
//
// A prefill's projections multiply a matrix of tokens by a weight matrix,
// bf16 in and f32 sums. On a GPU those belong to the tensor cores: here a
// warp computes 16 x 32 tiles of the product with `mma.sync` m16n8k16
// (nvgpu.mma.sync: each lane holds a fixed fragment of A, B and the
// accumulators; MLIR22_NOTES.md "Tensor cores"), where one thread per
// output would run the CUDA cores at a small part of their peak.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
#define LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace linnet {

/// The shape of one `mma.sync`: rows of A, columns of B, the reduced depth.
inline constexpr int64_t kMmaRows = 16;
inline constexpr int64_t kMmaColumns = 8;
inline constexpr int64_t kMmaDepth = 16;
/// A warp's tile: one A fragment against four B fragments per step.
inline constexpr int64_t kWarpTileColumns = 4 * kMmaColumns;
/// Warps of a block along the rows; the rest go along the columns.
inline constexpr int64_t kBlockRowWarps = 4;

/// A unit attribute on a product whose rows are a run-time count that is
/// below 16 where it runs (linnet-cuda-version-products' first form): a
/// warp reduction's, not the tensor cores'.
inline constexpr llvm::StringLiteral kFewRowsAttrName = "linnet.few_rows";

/// What makes a linalg op a matrix product for the tensor cores: two bf16
/// inputs, one f32 output, a body `out + extf(lhs) * extf(rhs)`, projected
/// permutations for maps, one reduction loop `k` of a static extent that is
/// a multiple of 16; a loop `m` the lhs and output use and the rhs does not
/// (its rows), a loop `n` the rhs and output use and the lhs does not (its
/// columns). Other parallel loops (a batch) take a tile of 1.
struct TensorCoreMatmul {
  unsigned m, n, k;
  unsigned lhs, rhs;
};

/// `op`'s tensor-core form, on tensors or buffers; none where it has another
/// form, where its rows are a handful (a static count below 16, or marked
/// `linnet.few_rows`: a decode step, a warp reduction's), or where a block of
/// `threadsPerBlock` threads is not a multiple of 4 warps.
std::optional<TensorCoreMatmul> matchTensorCoreMatmul(mlir::linalg::LinalgOp op,
                                                      int64_t threadsPerBlock);

/// The block tile of such an op: 64 rows by 32 columns a column of warps
/// (64 x 64 for 256 threads), 1 for the other parallel loops, the reduction
/// whole.
llvm::SmallVector<int64_t> tensorCoreBlockTile(mlir::linalg::LinalgOp op,
                                               const TensorCoreMatmul &matmul,
                                               int64_t threadsPerBlock);

/// Replaces `op` (on buffers) by code in a block of `threads` threads,
/// `thread` this one's id: warp w computes 16 x 32 tiles w, w + warps, ...
/// of the output, its lanes loading their fragments of A and B (zero past
/// the edges), an `nvgpu.mma.sync` per 16 x 8 part and 16 of the reduced
/// depth, and storing their accumulators. Every thread runs the loops alike
/// (a warp past the last tile computes nothing it keeps), so each mma.sync
/// sees a whole warp.
mlir::LogicalResult lowerToTensorCores(mlir::RewriterBase &rewriter,
                                       mlir::linalg::LinalgOp op,
                                       const TensorCoreMatmul &matmul,
                                       mlir::Value thread, mlir::Value threads);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

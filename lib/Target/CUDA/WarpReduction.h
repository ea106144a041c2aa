//===- WarpReduction.h - reductions shared by the lanes of a warp ---------===//
//
// A reduction whose one thread per output reads its input with a stride of
// a whole row across the warp (a GEMV's weight rows, a norm's sum of
// squares) runs at a few percent of a GPU's bandwidth. Here an output is a
// warp's: its 32 lanes read consecutive 16-byte chunks of the reduced axis,
// each keeps an f32 partial, and shuffles combine them (MLIR22_NOTES.md 6:
// this form of a decode GEMV beat cuBLAS on an H200).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_WARPREDUCTION_H
#define LINNET_LIB_TARGET_CUDA_WARPREDUCTION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace linnet {

/// Lanes of an NVIDIA warp.
inline constexpr int64_t kWarpSize = 32;

/// Bytes of one vector access: what a lane reads at once (ld.global.v4).
inline constexpr int64_t kVectorBytes = 16;

/// Whether `op` reads `operand` contiguously along loop `red`: a buffer
/// whose last index is that loop alone (no other index uses it), with unit
/// stride there; its elements are whole bytes.
bool readsContiguously(mlir::linalg::LinalgOp op, mlir::OpOperand &operand,
                       unsigned red);

/// Whether `type`'s layout has a unit stride along its last axis (known
/// statically).
bool hasUnitLastStride(mlir::MemRefType type);

/// An i1: whether `memref`'s first element and every row (each stride but
/// the unit one) fall on 16-byte boundaries, as vector accesses of
/// kVectorBytes along its last axis need (known only at run time).
mlir::Value alignedForVectors(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value memref);

/// `map`'s results at the loop indices `ivs`: an operand's indices in a
/// kernel that runs a linalg op's loops itself (a warp reduction, a
/// tensor-core product).
llvm::SmallVector<mlir::Value> indicesAt(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::AffineMap map,
                                         llvm::ArrayRef<mlir::Value> ivs);

/// `memref[indices]` where `inside` (an i1) holds, zero of its element type
/// elsewhere (past a tile's edge), the load in the branch that needs it.
mlir::Value loadOrZero(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value memref, mlir::ValueRange indices,
                       mlir::Value inside);

/// What makes a linalg op a warp reduction: one output in f32, one
/// reduction loop, a body `combiner(out, f(inputs))` with an associative
/// and commutative combiner (add, min, max) and its neutral element, so
/// that lanes may reduce their parts in any order, and an input laid out
/// along the reduced axis (none read along it laid out along another).
struct WarpReduction {
  mlir::Operation *combiner;
  mlir::TypedAttr neutral;
};

/// `op`'s warp reduction, on tensors or buffers; none where it has another
/// form, or where a block of `threadsPerBlock` threads is not whole warps.
std::optional<WarpReduction> matchWarpReduction(mlir::linalg::LinalgOp op,
                                                int64_t threadsPerBlock);

/// Replaces `op` (on buffers, its reduction loop last) by code in a block of
/// `threads` threads, `thread` this one's id: warp w computes outputs w,
/// w + warps, ...; its lanes read the reduced axis in 16-byte vectors where
/// every operand read along it is contiguous and 16-byte aligned (checked at
/// run time, else element by element), then a butterfly of shuffles; lane 0
/// combines the total into the output. Every thread runs the loop over
/// outputs alike (a warp past the last output adds nothing), so the
/// shuffles see whole warps.
mlir::LogicalResult lowerToWarps(mlir::RewriterBase &rewriter,
                                 mlir::linalg::LinalgOp op,
                                 const WarpReduction &reduction,
                                 mlir::Value thread, mlir::Value threads);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_WARPREDUCTION_H

//===- TensorCoreMatmul.h - matrix products on the tensor cores -----------===//
//
// A prefill's projections multiply a matrix of tokens by a weight matrix,
// bf16 in and f32 sums. On a GPU those belong to the tensor cores: here a
// warp computes 32 x 64 (or 16 x 32) tiles of the product with `mma.sync`
// m16n8k16 (nvgpu.mma.sync: each lane holds a fixed fragment of A, B and
// the accumulators; MLIR22_NOTES.md "Tensor cores"), where one thread per
// output would run the CUDA cores at a small part of their peak. A block
// stages its tiles of A and B in workgroup memory, 32 of the depth at a
// time, read from global memory in coalesced 16-byte vectors: each element
// then leaves global memory once a block, not once a warp that uses it.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H
#define LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

#include "linnet/Codegen/RowGather.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <array>
#include <optional>

namespace linnet {

/// The shape of one `mma.sync`: rows of A, columns of B, the reduced depth.
inline constexpr int64_t kMmaRows = 16;
inline constexpr int64_t kMmaColumns = 8;
inline constexpr int64_t kMmaDepth = 16;
/// Warps of a block along the rows; the rest go along the columns.
inline constexpr int64_t kBlockRowWarps = 4;

/// The depth of the tiles of A and B a block stages per step.
inline constexpr int64_t kStageDepth = 32;
/// Elements from one staged row to the next: the depth and 8 more, so rows
/// stay 16-byte aligned (80 bytes) and the 32 lanes reading a fragment
/// (rows l / 4, words l % 4 of them) fall in 32 different banks.
inline constexpr int64_t kStageRowElements = kStageDepth + 8;

/// A unit attribute on a product whose rows are a run-time count that is
/// below 16 where it runs (linnet-cuda-version-products' first form): a
/// warp reduction's, not the tensor cores'.
inline constexpr llvm::StringLiteral kFewRowsAttrName = "linnet.few_rows";

/// What makes a linalg op a matrix product for the tensor cores: two bf16
/// inputs, one f32 output, a body `out + extf(lhs) * extf(rhs)`, projected
/// permutations for maps, one reduction loop `k` of a static extent that is
/// a multiple of 16 or of a run-time one (attention's block of keys, staged
/// with zeros past its end); a loop `m` the lhs and output use and the rhs does
/// not (its rows), a loop `n` the rhs and output use and the lhs does not (its
/// columns). Other parallel loops (a batch) take a tile of 1.
struct TensorCoreMatmul {
  unsigned m, n, k;
  unsigned lhs, rhs;
};

/// How a block's warps share a product's block tile: kBlockRowWarps by
/// `columnWarps` warps, each with `rowFragments` x 16 rows by `columnParts`
/// x 8 columns of accumulators (as many mma.sync a 16 of the depth, from
/// `rowFragments` A fragments and `columnParts` B fragments read from the
/// stages).
struct TensorCoreLayout {
  int64_t columnWarps, rowFragments, columnParts;
  int64_t warpRows() const { return rowFragments * kMmaRows; }
  int64_t warpColumns() const { return columnParts * kMmaColumns; }
  int64_t rows() const { return kBlockRowWarps * warpRows(); }
  int64_t columns() const { return columnWarps * warpColumns(); }
};

/// `op`'s tensor-core form, on tensors or buffers; none where it has another
/// form, where its rows are a handful (a static count below 16, or marked
/// `linnet.few_rows`: a decode step, a warp reduction's), or where a block of
/// `threadsPerBlock` threads is not a multiple of 4 warps.
std::optional<TensorCoreMatmul> matchTensorCoreMatmul(mlir::linalg::LinalgOp op,
                                                      int64_t threadsPerBlock);

/// The layout of such an op in a block of `threadsPerBlock` threads: warp
/// tiles of 32 x 64 (16 mma.sync for 2 A and 8 B fragments read from shared
/// memory, 128 x 128 a block of 256 threads) where its rows and columns may
/// fill one (a run-time count, or a bound of at least that: a prompt's
/// projections), 16 x 32 (4 for 1 and 4) otherwise (64 x 64: the grouped
/// experts' tiles of 64 rows, small products).
TensorCoreLayout tensorCoreLayout(mlir::linalg::LinalgOp op,
                                  const TensorCoreMatmul &matmul,
                                  int64_t threadsPerBlock);

/// The block tile of such an op: its layout's rows and columns (cut to the
/// op's static extents), 1 for the other parallel loops, the reduction
/// whole.
llvm::SmallVector<int64_t> tensorCoreBlockTile(mlir::linalg::LinalgOp op,
                                               const TensorCoreMatmul &matmul,
                                               int64_t threadsPerBlock);

/// The workgroup buffers a block stages the tiles of A and of B of products
/// of `layouts` in (one pair the products of a launch share, each ending at
/// a barrier before the next begins): bf16, kStageRowElements a row of the
/// largest block tile.
std::array<mlir::MemRefType, 2>
tensorCoreStageTypes(mlir::MLIRContext *context,
                     llvm::ArrayRef<TensorCoreLayout> layouts);

/// Where a product's sums go once its reduction ends when its output is a
/// buffer the region allocates (the f32 tile a block would otherwise stage
/// in workgroup memory), set by `start` before the product (to a scalar
/// `value`: a linalg.fill, or a generic of no inputs yielding it; or a copy
/// of a buffer `source`, the sums so far) and read after it by `consumer`
/// alone: an op of parallel loops only (the rounding to bf16, a bias, a
/// residual) that reads the tile as its input `operand` through a
/// permutation and writes no buffer the product reads, with nothing between
/// the two writing what the product reads (the product moves to just
/// before it). Each lane's accumulators then start from the value or the
/// source, and the lane applies the consumer to them and stores its
/// results: no staged tile, no barrier before them.
struct TensorCoreEpilogue {
  /// The fill (its value codegen::uniformValue's) or the copy.
  mlir::Operation *start;
  /// The copy's source; null for a fill.
  mlir::Value source;
  mlir::linalg::LinalgOp consumer;
  unsigned operand;
};

/// The epilogue of `product` (a tensor-core product on buffers), if its
/// output is such a tile.
std::optional<TensorCoreEpilogue>
matchTensorCoreEpilogue(mlir::linalg::LinalgOp product);

/// An input of a tensor-core product (on buffers) that only `op`, a gather
/// of rows (codegen::RowGather) before it in its block, writes, with
/// nothing between them writing what the gather reads, and that only the
/// product reads: the product stages each row of its tile from the gather's
/// source, and neither the gather nor its buffer is left (a prompt's routed
/// experts' rows, read from the tokens' rows as they lie).
struct TensorCoreStagedGather {
  mlir::linalg::LinalgOp op;
  codegen::RowGather rows;
};

/// The staged gather of `product`'s input `input`, if it has one.
std::optional<TensorCoreStagedGather>
matchTensorCoreStagedGather(mlir::linalg::LinalgOp product,
                            mlir::OpOperand &input);

/// Whether `buffer` (an allocation) is the buffer of a staged gather of a
/// tensor-core product of a block of `threadsPerBlock` threads: it is then
/// never written, and holds no workgroup memory.
bool isStagedGatherBuffer(mlir::Value buffer, int64_t threadsPerBlock);

/// Elements a thread copies into a stage at once: 16 bytes of bf16.
inline constexpr int64_t kStageChunk = 8;

/// A chunk of kStageChunk bf16 elements bound for a stage: `vector` (one
/// 16-byte load) where `whole` holds, else each element from `element`
/// (zero past an edge).
mlir::Value loadStageChunk(
    mlir::OpBuilder &b, mlir::Location loc, mlir::Value whole,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location)> vector,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, int64_t)>
        element);

/// Stores a chunk at element `at` of `stage` (16-byte aligned there), only
/// where `inStage` holds (null: always; a thread's last chunk may lie past
/// the stage).
void storeStageChunk(mlir::OpBuilder &b, mlir::Location loc,
                     mlir::Value elements, mlir::Value stage, mlir::Value at,
                     mlir::Value inStage);

/// `stage` (a workgroup buffer) in the default memory space, as a kernel's
/// copies write it and its loads read it (NVPTX infers the shared space
/// back); ldmatrix reads the workgroup buffer itself.
mlir::Value inDefaultMemorySpace(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value stage);

/// B fragment `of` (0 or 1) of an ldmatrix of four 8 x 8 matrices that read
/// (columns 0-7, depths 0-7), (0-7, 8-15), (8-15, 0-7), (8-15, 8-15): the
/// fragments of two parts of 8 columns, a 16 of the depth.
mlir::Value bFragmentOf(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value matrices, int64_t of);

/// Replaces `op` (on buffers) by code in a block of `threadsPerBlock`
/// threads, `thread` this one's id, `stages` workgroup buffers of
/// tensorCoreStageTypes: for each block tile of the output (its layout's),
/// for each 32 of the reduced depth, the block copies its rows of A and B
/// into the stages (16-byte vectors where the operand is contiguous along
/// the depth and aligned, element by element otherwise; zero past the
/// edges), waits at a barrier, and each warp multiplies its tile's fragments
/// from there with `nvgpu.mma.sync`, ldmatrix reading each fragment once a
/// 16 of the depth; a barrier again before the next copy. The sums stay in
/// registers and are stored once, or, given an `epilogue`, start from its
/// start's value or source and go through its consumer, which is erased
/// with the start and the tile. An input with a staged gather
/// (matchTensorCoreStagedGather) is staged from the gather's source, row
/// by row, and the gather and its buffer are erased. Every thread runs the
/// loops alike, so each barrier and mma.sync sees whole warps.
mlir::LogicalResult
lowerToTensorCores(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                   const TensorCoreMatmul &matmul, mlir::Value thread,
                   int64_t threadsPerBlock, llvm::ArrayRef<mlir::Value> stages,
                   const std::optional<TensorCoreEpilogue> &epilogue);

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_TENSORCOREMATMUL_H

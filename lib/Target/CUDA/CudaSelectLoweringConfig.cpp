//===- CudaSelectLoweringConfig.cpp - the GPU's block tiles ---------------===//
//
// The CUDA target's tile sizes for the shared Codegen passes: the `thread`
// level of a #linnet.lowering_config, a dispatch region's tile, is one GPU
// block's. A block takes up to threads-per-block parallel iterations, one
// per thread (linnet-cuda-map-dispatch-regions deals them out), the
// innermost loop first so that neighbouring threads touch neighbouring
// elements. Reductions stay whole; a warp reduction's (WarpReduction.h)
// belongs to a warp, so its block takes an output per warp, and a matrix
// product for the tensor cores (TensorCoreMatmul.h) takes 64 x 64 outputs.
//
//===----------------------------------------------------------------------===//

#include "Libdevice.h"
#include "PassDetail.h"
#include "TensorCoreAttention.h"
#include "TensorCoreMatmul.h"
#include "WarpReduction.h"
#include "WarpScan.h"

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Interfaces/TilingInterface.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDASELECTLOWERINGCONFIG
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The block tile of `op`: parallel loops from the innermost out, each
/// taking what is left of `threads` iterations (a dynamic extent all of it),
/// 0 (whole) for reductions. A loop that gets a tile of 1 is still tiled,
/// so that the block count, not the block, covers it.
SmallVector<int64_t> blockTile(linalg::LinalgOp op, int64_t threads) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> tile(ranges.size(), 0);
  int64_t left = threads;
  for (int64_t d = int64_t(ranges.size()) - 1; d >= 0; --d) {
    if (iterators[d] != utils::IteratorType::parallel)
      continue;
    int64_t extent = ShapedType::isDynamic(ranges[d]) ? left : ranges[d];
    tile[d] = std::max<int64_t>(1, std::min(extent, left));
    left = std::max<int64_t>(1, left / tile[d]);
  }
  return tile;
}

/// The block tile of an op tiled as an op: the delta rule's, a prompt's or
/// a decode step's, a value column 8 lanes (its lowering keeps it an op,
/// which the block runs as a warp scan and which needs no buffer of its
/// own: a decode step's 32 heads of 128 columns are 128 blocks, each moving
/// 32 columns of state, not 32 each moving a head's 64 KiB); attention's,
/// where every operand has a static shape (a decode step's: a tile of a
/// dynamic extent would need buffers of no bound in the block), a row and a
/// head; a prompt's, where the tensor cores take it (TensorCoreAttention.h),
/// a row, a head and 64 queries. None for other ops.
std::optional<SmallVector<int64_t>> specialOpTile(Operation *op,
                                                  int64_t threadsPerBlock) {
  bool staticShapes = llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  });
  // A scan: a value column kScanLanesPerColumn lanes
  // (linnet-cuda-map-dispatch-regions runs it as a warp scan), a row and as
  // many of a head's columns as the block has groups of lanes (no more than
  // the head has).
  if (auto scan = dyn_cast<linnet::DeltaRuleOp>(op)) {
    int64_t columns = threadsPerBlock / linnet::kScanLanesPerColumn;
    int64_t headColumns =
        cast<ShapedType>(scan.getValue().getType()).getDimSize(3);
    if (!ShapedType::isDynamic(headColumns))
      columns = std::min(columns, headColumns);
    return SmallVector<int64_t>{1, 1, std::max<int64_t>(columns, 1)};
  }
  if (auto attention = dyn_cast<linnet::AttentionOp>(op)) {
    if (linnet::matchTensorCoreAttention(attention, threadsPerBlock))
      return SmallVector<int64_t>{1, 1, linnet::kAttentionQueryTile};
    if (staticShapes)
      return SmallVector<int64_t>{1, 1, 0};
  }
  return std::nullopt;
}

/// Whether `op` reads, through `read`, one element of an operand for each
/// of its iterations: a projected permutation, each loop it leaves out of
/// extent 1 (a unit axis a reshape added, read through).
bool readsElementForElement(linalg::LinalgOp op, AffineMap read) {
  if (!read.isProjectedPermutation())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (!read.isFunctionOfDim(d) && ranges[d] != 1)
      return false;
  return true;
}

/// The tile of `op`, without reduction loops, where it reads element for
/// element the result of an op with a tile of its own form that has no
/// other user: a warp reduction (a GEMV's f32 sums it rounds), an output per
/// warp, or a tensor-core product (a prefill projection's sums), its 64 x 64
/// tile, or an elementwise op that has such a tile itself (a GEMV's bias,
/// then a residual sum of it). The producer joins its region (the pipeline
/// fuses reductions), so the region's tile is the producer's. One that
/// broadcasts the result (a norm's scale over its row) keeps its own tile:
/// each of its tiles computes the few sums it reads.
std::optional<SmallVector<int64_t>> producerTile(linalg::LinalgOp op,
                                                 int64_t threads) {
  if (op.getNumReductionLoops() != 0)
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto producer = input->get().getDefiningOp<linalg::LinalgOp>();
    AffineMap read = op.getMatchingIndexingMap(input);
    if (!producer || !producer->hasOneUse() ||
        !readsElementForElement(op, read))
      continue;
    AffineMap written =
        producer.getIndexingMapMatchingResult(cast<OpResult>(input->get()));
    if (!written.isProjectedPermutation() ||
        written.getNumResults() != read.getNumResults())
      continue;
    SmallVector<int64_t> tile;
    if (std::optional<linnet::TensorCoreMatmul> matmul =
            linnet::matchTensorCoreMatmul(producer, threads))
      tile = linnet::tensorCoreBlockTile(producer, *matmul, threads);
    else if (linnet::matchWarpReduction(producer, threads))
      tile = blockTile(producer, threads / linnet::kWarpSize);
    else if (std::optional<SmallVector<int64_t>> inner =
                 producerTile(producer, threads))
      tile = std::move(*inner);
    else
      continue;
    // Dimension r of the result is the producer's loop `written`'s and
    // this op's loop `read`'s; a loop read nowhere has extent 1.
    SmallVector<int64_t> own(op.getNumLoops(), 1);
    for (unsigned r = 0; r < read.getNumResults(); ++r)
      own[read.getDimPosition(r)] = tile[written.getDimPosition(r)];
    return own;
  }
  return std::nullopt;
}

struct CudaSelectLoweringConfigPass
    : linnet::impl::LinnetCudaSelectLoweringConfigBase<
          CudaSelectLoweringConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    getOperation().walk([&](TilingInterface op) {
      if (linnet::codegen::getLoweringConfig(op))
        return;
      std::optional<SmallVector<int64_t>> tile =
          specialOpTile(op, threadsPerBlock);
      if (!tile)
        return;
      SmallVector<int64_t> none(tile->size(), 0);
      linnet::codegen::setLoweringConfig(
          op, linnet::LoweringConfigAttr::get(context, *tile, none, none));
    });
    if (specialOpsOnly)
      return;
    getOperation().walk([&](linalg::LinalgOp op) {
      // A configuration pinned in the input is kept.
      if (!op.hasPureTensorSemantics() ||
          linnet::codegen::getLoweringConfig(op))
        return;
      SmallVector<int64_t> thread;
      if (std::optional<linnet::TensorCoreMatmul> matmul =
              linnet::matchTensorCoreMatmul(op, threadsPerBlock)) {
        thread = linnet::tensorCoreBlockTile(op, *matmul, threadsPerBlock);
        // Its sums go through their reader from the accumulators
        // (TensorCoreEpilogue).
        op->setAttr(linnet::codegen::kResultInRegistersName,
                    UnitAttr::get(context));
      } else if (std::optional<SmallVector<int64_t>> tile =
                     producerTile(op, threadsPerBlock))
        thread = *tile;
      else if (linnet::matchWarpReduction(op, threadsPerBlock))
        thread = blockTile(op, threadsPerBlock / linnet::kWarpSize);
      else
        thread = blockTile(op, threadsPerBlock);
      SmallVector<int64_t> none(thread.size(), 0);
      linnet::codegen::setLoweringConfig(
          op, linnet::LoweringConfigAttr::get(context, thread, none, none));
      if (linnet::computesTrigonometric(op))
        op->setAttr(linnet::codegen::kOwnRegionName, UnitAttr::get(context));
    });
  }
};

} // namespace

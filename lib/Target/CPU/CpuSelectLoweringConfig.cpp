//===- CpuSelectLoweringConfig.cpp - the CPU's tile sizes -----------------===//
//
// The CPU target's policy, as a `#linnet.lowering_config` on every linalg
// op for the Codegen passes to read: contractions keep an 8x16 accumulator
// in registers across the reduction loop (a thread's tile 64x256, k in
// blocks of 256); a contraction whose operands both run along k is a dot
// product per output with lanes along k; other ops get vectors along their
// innermost loop and split their outermost parallel loop over threads; the
// ops tiled as ops get a row and a head (attention, the delta rule) or a
// block of channels (the causal convolution) per thread.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUSELECTLOWERINGCONFIG
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::codegen::isContraction;

namespace {

/// Tile sizes of one operation at the three levels of the CPU schedule.
struct CpuTileSizes {
  /// `scf.forall` tile: one per thread.
  SmallVector<int64_t> thread;
  /// `scf.for` block of the reduction dimensions (contractions only).
  SmallVector<int64_t> reductionBlock;
  /// `scf.for` tile that becomes one vector operation.
  SmallVector<int64_t> vector;
};

/// Thread tiles per dispatch region to aim for (a few per core, so that
/// uneven tiles balance), and the least work of one: below it the fork of
/// a thread team costs more than the tile.
constexpr int64_t kTilesPerRegion = 16;
constexpr int64_t kMinTileElements = 4096;

/// Keeps a tile size no larger than a static loop range, so that small
/// dimensions (a GEMV's single row) get neither masks nor wasted lanes.
int64_t clampToRange(int64_t tile, int64_t range) {
  if (tile <= 0 || ShapedType::isDynamic(range))
    return tile;
  return std::min(tile, range);
}

/// Whether both inputs of a contraction are read along its (single)
/// reduction dimension: k is the last, contiguous, index of each.
bool readsAlongReduction(linalg::LinalgOp op,
                         const linalg::ContractionDimensions &dims) {
  if (dims.k.size() != 1 || op.getNumDpsInputs() != 2)
    return false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0 ||
        map.getResults().back() !=
            getAffineDimExpr(dims.k.front(), op->getContext()))
      return false;
  }
  return true;
}

/// Whether every input of `op` holds bf16 elements.
bool hasBf16Inputs(linalg::LinalgOp op) {
  return llvm::all_of(op.getDpsInputOperands(), [](OpOperand *input) {
    return getElementTypeOrSelf(input->get().getType()).isBF16();
  });
}

CpuTileSizes
computeTileSizes(linalg::LinalgOp op,
                 const linnet::LinnetCpuSelectLoweringConfigOptions &o) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = ranges.size();
  CpuTileSizes sizes;
  sizes.thread.assign(numLoops, 0);
  sizes.reductionBlock.assign(numLoops, 0);
  sizes.vector.assign(numLoops, 1);
  if (numLoops == 0)
    return sizes;

  FailureOr<linalg::ContractionDimensions> dims =
      isContraction(op) ? linalg::inferContractionDims(op)
                        : FailureOr<linalg::ContractionDimensions>(failure());
  if (succeeded(dims)) {
    // One thread tile per output element of the batch and outer loops; the
    // innermost m and n get theirs below.
    for (ArrayRef<unsigned> loops :
         {ArrayRef<unsigned>(dims->batch), ArrayRef<unsigned>(dims->m),
          ArrayRef<unsigned>(dims->n)})
      for (unsigned d : loops)
        sizes.thread[d] = 1;
  }
  if (succeeded(dims) && readsAlongReduction(op, *dims)) {
    // Both operands run along k (a weight in PyTorch's [out, in] layout):
    // each output is a dot product of two contiguous rows, with the lanes
    // along k (carried unreduced through the k loop, see
    // carryUnreducedLanes). Several rows (m) and columns (n) at once share
    // each vector loaded (dotProductRegisterTile); a single row (a decode
    // GEMV, an expert's matrix-vector product) is one output at a time with
    // `vectorLength` lanes, which reads the weight fastest. Threads split m
    // and n.
    unsigned k = dims->k.back();
    bool singleRow = dims->m.empty() || ranges[dims->m.back()] == 1;
    int64_t rows = singleRow ? 1 : o.dotProductRegisterTile[0];
    int64_t columns = singleRow ? 1 : o.dotProductRegisterTile[1];
    int64_t lanes = singleRow ? o.vectorLength : o.dotProductRegisterTile[2];
    // Paired bf16 dot products halve the f32 accumulators: twice the lanes
    // keep their number.
    if (o.bf16DotProducts && hasBf16Inputs(op))
      lanes *= 2;
    sizes.vector[k] = clampToRange(lanes, ranges[k]);
    if (!dims->m.empty()) {
      unsigned m = dims->m.back();
      sizes.thread[m] = clampToRange(o.contractionThreadTile[0], ranges[m]);
      sizes.vector[m] = clampToRange(rows, ranges[m]);
    }
    if (!dims->n.empty()) {
      // About 16 column tiles, each of at least kMinTileElements
      // multiply-adds for one row.
      unsigned n = dims->n.back();
      int64_t chunk = o.contractionThreadTile[1];
      if (!ShapedType::isDynamic(ranges[n])) {
        chunk = llvm::divideCeil(ranges[n], kTilesPerRegion);
        if (!ShapedType::isDynamic(ranges[k]))
          chunk = std::max<int64_t>(
              chunk, llvm::divideCeil(8 * kMinTileElements, ranges[k]));
        chunk = llvm::alignTo(chunk, 8);
      }
      sizes.thread[n] = clampToRange(chunk, ranges[n]);
      sizes.vector[n] = clampToRange(columns, ranges[n]);
    }
    return sizes;
  }
  if (succeeded(dims)) {
    if (!dims->m.empty()) {
      unsigned m = dims->m.back();
      sizes.thread[m] = clampToRange(o.contractionThreadTile[0], ranges[m]);
      sizes.vector[m] = clampToRange(o.contractionRegisterTile[0], ranges[m]);
    }
    if (!dims->n.empty()) {
      unsigned n = dims->n.back();
      sizes.thread[n] = clampToRange(o.contractionThreadTile[1], ranges[n]);
      sizes.vector[n] = clampToRange(o.contractionRegisterTile[1], ranges[n]);
    }
    if (!dims->k.empty()) {
      unsigned k = dims->k.back();
      int64_t block = o.contractionReductionTile;
      if (block > 0 && (ShapedType::isDynamic(ranges[k]) || ranges[k] > block))
        sizes.reductionBlock[k] = block;
    }
    return sizes;
  }

  // Any other operation: the innermost loop is the vector, and the thread
  // tile splits the outermost parallel loop that is not a unit dimension,
  // into tiles of at least kMinTileElements: forking a thread team costs
  // more than a norm over one row (a decode's 256 elements) takes. An op
  // too small for two such tiles gets no thread tile at all.
  unsigned inner = numLoops - 1;
  sizes.vector[inner] = clampToRange(o.vectorLength, ranges[inner]);
  if (!llvm::any_of(ranges, ShapedType::isDynamic) &&
      std::accumulate(ranges.begin(), ranges.end(), int64_t(1),
                      std::multiplies<int64_t>()) < 2 * kMinTileElements)
    return sizes;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < numLoops; ++d) {
    if (iterators[d] != utils::IteratorType::parallel || ranges[d] == 1)
      continue;
    int64_t chunk;
    if (ShapedType::isDynamic(ranges[d]))
      chunk = d == inner ? 32 * o.vectorLength : 8;
    else
      chunk = llvm::divideCeil(ranges[d], kTilesPerRegion);
    // The elements of one step along d, where the other loops are static.
    int64_t step = 1;
    for (unsigned other = 0; other < numLoops; ++other)
      if (other != d && !ShapedType::isDynamic(ranges[other]))
        step *= ranges[other];
    chunk = std::max<int64_t>(chunk, llvm::divideCeil(kMinTileElements, step));
    if (d == inner)
      chunk = llvm::alignTo(chunk, o.vectorLength);
    sizes.thread[d] = clampToRange(chunk, ranges[d]);
    break;
  }
  return sizes;
}

/// The product of `sizes`, each dynamic one taken as `kMinTileElements`
/// (enough work: a sequence, a batch), saturated.
uint64_t workOf(ArrayRef<int64_t> sizes) {
  uint64_t work = 1;
  for (int64_t size : sizes)
    work = llvm::SaturatingMultiply<uint64_t>(
        work, ShapedType::isDynamic(size) ? kMinTileElements : size);
  return work;
}

/// The thread tiles of an op tiled as an op: a row and a head per tile (a
/// head's whole scan or loop over keys is the unit of work, its state or
/// keys read by one thread), a row and about 1/16 of the channels for the
/// causal convolution; none where the whole op is too little work for two
/// tiles (a decode step of a small state). Null for other ops.
std::optional<SmallVector<int64_t>>
specialOpThreadTiles(Operation *op,
                     const linnet::LinnetCpuSelectLoweringConfigOptions &o) {
  auto shape = [](Value value) {
    return cast<RankedTensorType>(value.getType()).getShape();
  };
  if (auto attention = dyn_cast<linnet::AttentionOp>(op)) {
    // Scores: B * Hq * S * L * D.
    SmallVector<int64_t> sizes(shape(attention.getQuery()));
    sizes.push_back(shape(attention.getKey())[2]);
    if (workOf(sizes) < 2 * kMinTileElements)
      return SmallVector<int64_t>{0, 0, 0};
    return SmallVector<int64_t>{1, 1, 0};
  }
  if (auto deltaRule = dyn_cast<linnet::DeltaRuleOp>(op)) {
    // Every step reads and writes each head's [K, V] state: B * S * N * V * K.
    SmallVector<int64_t> sizes(shape(deltaRule.getValue()));
    sizes.push_back(shape(deltaRule.getKey())[3]);
    if (workOf(sizes) < 2 * kMinTileElements)
      return SmallVector<int64_t>{0, 0, 0};
    return SmallVector<int64_t>{1, 1, 0};
  }
  if (auto conv = dyn_cast<linnet::CausalConvOp>(op)) {
    // B * S * C * W multiply-adds; channels in whole vectors.
    SmallVector<int64_t> sizes(shape(conv.getInput()));
    sizes.push_back(shape(conv.getTaps())[1]);
    if (workOf(sizes) < 2 * kMinTileElements)
      return SmallVector<int64_t>{0, 0};
    int64_t channels = shape(conv.getInput())[2];
    int64_t chunk = 8 * o.vectorLength;
    if (!ShapedType::isDynamic(channels))
      chunk = std::min<int64_t>(
          channels, llvm::alignTo(llvm::divideCeil(channels, kTilesPerRegion),
                                  o.vectorLength));
    return SmallVector<int64_t>{1, chunk};
  }
  return std::nullopt;
}

struct CpuSelectLoweringConfigPass
    : linnet::impl::LinnetCpuSelectLoweringConfigBase<
          CpuSelectLoweringConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    linnet::LinnetCpuSelectLoweringConfigOptions options;
    options.contractionThreadTile.assign(contractionThreadTile.begin(),
                                         contractionThreadTile.end());
    options.contractionRegisterTile.assign(contractionRegisterTile.begin(),
                                           contractionRegisterTile.end());
    options.contractionReductionTile = contractionReductionTile;
    options.vectorLength = vectorLength;
    options.bf16DotProducts = bf16DotProducts;
    if (options.contractionThreadTile.size() != 2)
      options.contractionThreadTile = {64, 256};
    if (options.contractionRegisterTile.size() != 2)
      options.contractionRegisterTile = {8, 16};
    options.dotProductRegisterTile.assign(dotProductRegisterTile.begin(),
                                          dotProductRegisterTile.end());
    if (options.dotProductRegisterTile.size() != 3)
      options.dotProductRegisterTile = {4, 4, 16};
    MLIRContext *context = &getContext();
    getOperation().walk([&](TilingInterface op) {
      if (linnet::codegen::getLoweringConfig(op))
        return;
      std::optional<SmallVector<int64_t>> thread =
          specialOpThreadTiles(op, options);
      if (!thread)
        return;
      SmallVector<int64_t> none(thread->size(), 0);
      linnet::codegen::setLoweringConfig(
          op, linnet::LoweringConfigAttr::get(context, *thread, none, none));
    });
    getOperation().walk([&](linalg::LinalgOp op) {
      // A configuration pinned in the input is kept.
      if (!op.hasPureTensorSemantics() ||
          linnet::codegen::getLoweringConfig(op))
        return;
      CpuTileSizes sizes = computeTileSizes(op, options);
      linnet::codegen::setLoweringConfig(
          op, linnet::LoweringConfigAttr::get(
                  context, sizes.thread, sizes.reductionBlock, sizes.vector));
    });
  }
};

} // namespace

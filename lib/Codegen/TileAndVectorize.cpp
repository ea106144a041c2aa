//===- TileAndVectorize.cpp - register tiles, vectors, accumulators -------===//
//
// Inside the dispatch regions, every op is tiled to its lowering
// configuration's reduction and vector tiles and vectorized (a dynamic outer
// dimension split into whole tiles and a remainder taken one at a time); then
// the vector code is cleaned up so that accumulators live in registers: masks
// move into transfers, multiply + reduce becomes vector.contract,
// accumulators become loop-carried values, and dot products along a
// contiguous k carry their unreduced lanes.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Utils/AffineCanonicalizationUtils.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENTILEANDVECTORIZE
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::codegen::getLoweringConfig;
using linnet::codegen::kLoweringConfigName;
using linnet::codegen::tileSizesAsFoldResults;

namespace {

/// The loops of a tiled op, outermost first, and the op inside them.
struct TiledLoops {
  linalg::LinalgOp op;
  SmallVector<LoopLikeOpInterface> loops;
  /// The dimension of each loop.
  SmallVector<unsigned> dims;
};

/// Tiles `op` with `scf.for` loops.
FailureOr<TiledLoops> tileWithLoops(RewriterBase &rewriter, linalg::LinalgOp op,
                                    ArrayRef<int64_t> sizes) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return TiledLoops{op, {}, {}};
  scf::SCFTilingOptions options;
  options.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  options.setTileSizes(tileSizesAsFoldResults(op->getContext(), sizes));
  // Reduction loops innermost: the accumulator tile stays in registers.
  SmallVector<int64_t> interchange;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::parallel)
      interchange.push_back(d);
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      interchange.push_back(d);
  options.setInterchange(interchange);

  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, result->replacements);
  auto tiled = dyn_cast<linalg::LinalgOp>(result->tiledOps.back());
  if (!tiled)
    return failure();
  TiledLoops loops{tiled, result->loops, {}};
  for (unsigned d : interchange)
    if (sizes[d] != 0)
      loops.dims.push_back(d);
  return loops;
}

/// The whole tiles of a split-off dimension (see splitOffRemainder) are
/// whole: in the loop over that dimension, whose upper bound is a multiple
/// of its step, the tile's extent `min(step, ub - iv)` is the step. With
/// that extent constant, canonicalization makes the tile's slices, and the
/// op, static there, so that it vectorizes without masks: a row mask makes
/// every broadcast element of a row its own masked one-element load.
/// `canonicalization` is every dialect's and op's canonicalization patterns.
FailureOr<linalg::LinalgOp>
makeWholeTilesStatic(RewriterBase &rewriter, TiledLoops &tiled, unsigned d,
                     const FrozenRewritePatternSet &canonicalization) {
  auto position = llvm::find(tiled.dims, d);
  if (position == tiled.dims.end())
    return tiled.op;
  auto loop = cast<scf::ForOp>(
      tiled.loops[position - tiled.dims.begin()].getOperation());
  SmallVector<affine::AffineMinOp> mins;
  loop.getBody()->walk([&](affine::AffineMinOp min) {
    if (llvm::is_contained(min.getOperands(), loop.getInductionVar()))
      mins.push_back(min);
  });
  for (affine::AffineMinOp min : mins)
    (void)scf::rewritePeeledMinMaxOp(rewriter, min, loop.getInductionVar(),
                                     loop.getUpperBound(), loop.getStep(),
                                     /*insideLoop=*/true);

  Operation *outermost = tiled.loops.front().getOperation();
  if (failed(applyPatternsGreedily(outermost->getRegion(0), canonicalization)))
    return failure();
  // The op was rebuilt with its static types (and inner loops of one trip
  // may be gone): the one linalg op left in the loops.
  SmallVector<linalg::LinalgOp> ops;
  outermost->walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return failure();
  return ops.front();
}

/// The outer dimension of `op` to split into whole vector tiles and a
/// remainder: a dynamic one, not the innermost, with a tile of several
/// iterations.
std::optional<unsigned> rowDimensionToSplit(linalg::LinalgOp op,
                                            ArrayRef<int64_t> vector) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d + 1 < ranges.size(); ++d)
    if (ShapedType::isDynamic(ranges[d]) && vector[d] > 1 &&
        iterators[d] == utils::IteratorType::parallel)
      return d;
  return std::nullopt;
}

/// Splits `op` (in place: `op` becomes the first part) along dimension `d`
/// at the largest multiple of `tile`; returns the second part, or null.
linalg::LinalgOp splitOffRemainder(RewriterBase &rewriter, linalg::LinalgOp &op,
                                   unsigned d, int64_t tile) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  SmallVector<Range> ranges =
      cast<TilingInterface>(op.getOperation()).getIterationDomain(rewriter);
  AffineExpr size = getAffineSymbolExpr(0, rewriter.getContext());
  OpFoldResult point = affine::makeComposedFoldedAffineApply(
      rewriter, loc, size.floorDiv(tile) * tile, {ranges[d].size});
  auto [first, second] = linalg::splitOp(
      rewriter, cast<TilingInterface>(op.getOperation()), d, point);
  if (!first)
    return {};
  op = cast<linalg::LinalgOp>(first.getOperation());
  return second ? cast<linalg::LinalgOp>(second.getOperation())
                : linalg::LinalgOp();
}

/// Vectorizes `op`, masking the dimensions whose extent is not static.
LogicalResult vectorizeTile(RewriterBase &rewriter, linalg::LinalgOp op,
                            ArrayRef<int64_t> tileSizes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> vectorSizes;
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    for (auto [range, tile] : llvm::zip_equal(ranges, tileSizes)) {
      if (ShapedType::isDynamic(range) && tile <= 0)
        return failure();
      vectorSizes.push_back(ShapedType::isDynamic(range) ? tile : range);
    }
  }
  // Explicit "not scalable" flags: with an empty list some vector types come
  // out with and some without the flags, and the two print alike but are
  // different types (contraction lowering then rejects them).
  SmallVector<bool> scalable(vectorSizes.size(), false);
  if (failed(linalg::vectorizeOpPrecondition(op, vectorSizes, scalable,
                                             /*vectorizeNDExtract=*/true)))
    return failure();
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::VectorizationResult> result =
      linalg::vectorize(rewriter, op, vectorSizes, scalable,
                        /*vectorizeNDExtract=*/true,
                        /*flatten1DDepthwiseConv=*/false,
                        /*assumeDynamicDimsMatchVecSizes=*/false,
                        /*createNamedContraction=*/true);
  if (failed(result))
    return failure();
  if (op->getNumResults() == 0)
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
  return success();
}

/// The vector read that `value` is (through an optional widening cast such
/// as bf16 -> f32), if it is one.
vector::TransferReadOp readThroughCasts(Value value) {
  while (Operation *cast = value.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::ExtSIOp, arith::ExtUIOp>(cast))
      break;
    value = cast->getOperand(0);
  }
  Operation *def = value.getDefiningOp();
  if (auto mask = dyn_cast_if_present<vector::MaskOp>(def))
    def = mask.getMaskableOp();
  return dyn_cast_if_present<vector::TransferReadOp>(def);
}

/// Whether a read's masked-off lanes are zero, or poison (which may be
/// given any value, zero included: see UnmaskZeroPaddedContraction).
bool hasZeroOrPoisonPadding(vector::TransferReadOp read) {
  Value padding = read.getPadding();
  return matchPattern(padding, m_AnyZeroFloat()) ||
         matchPattern(padding, m_Zero()) ||
         isa_and_present<ub::PoisonOp>(padding.getDefiningOp());
}

/// Drops the mask of a `vector.contract` whose operands are reads padded
/// with zeros: masked-off reduction lanes then add `0 * 0`, and masked-off
/// parallel lanes are never stored (the accumulator's write is masked). The
/// unmasked contraction lowers to plain broadcasts and FMAs instead of
/// scalar code. The vectorizer pads with poison; such a read's padding
/// becomes zero first.
struct UnmaskZeroPaddedContraction : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto contract =
        dyn_cast_if_present<vector::ContractionOp>(mask.getMaskableOp());
    if (!contract || mask.hasPassthru())
      return failure();
    vector::TransferReadOp lhs = readThroughCasts(contract.getLhs()),
                           rhs = readThroughCasts(contract.getRhs());
    if (!lhs || !rhs || !hasZeroOrPoisonPadding(lhs) ||
        !hasZeroOrPoisonPadding(rhs))
      return failure();
    for (vector::TransferReadOp read : {lhs, rhs}) {
      if (!isa_and_present<ub::PoisonOp>(read.getPadding().getDefiningOp()))
        continue;
      rewriter.setInsertionPoint(read);
      Type element = read.getPadding().getType();
      Value zero = arith::ConstantOp::create(rewriter, read.getLoc(), element,
                                             rewriter.getZeroAttr(element));
      rewriter.modifyOpInPlace(read,
                               [&] { read.getPaddingMutable().assign(zero); });
    }
    rewriter.setInsertionPoint(mask);
    Operation *unmasked = rewriter.clone(*contract);
    rewriter.replaceOp(mask, unmasked->getResults());
    return success();
  }
};

/// The type of `operand` of `contract` as a vector of the whole iteration
/// space, where that is only a reshape: the dimensions its indexing map
/// leaves out have size 1 and the others come in order. None otherwise.
std::optional<VectorType> iterationShapeOf(vector::ContractionOp contract,
                                           unsigned operand) {
  AffineMap map = contract.getIndexingMapsArray()[operand];
  SmallVector<int64_t> shape(map.getNumDims(), 1);
  auto type = cast<VectorType>(contract->getOperand(operand).getType());
  int64_t last = -1;
  for (auto [position, result] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || int64_t(dim.getPosition()) <= last)
      return std::nullopt;
    last = dim.getPosition();
    shape[last] = type.getDimSize(position);
  }
  return VectorType::get(shape, type.getElementType());
}

/// `type` without its unit dimensions (one dimension if all are): the shape
/// lanes are carried in. A unit dimension innermost (a reduction tile of one
/// key, say) would make every lane its own one-element vector in LLVM.
VectorType withoutUnitDims(VectorType type) {
  SmallVector<int64_t> shape;
  for (int64_t size : type.getShape())
    if (size != 1)
      shape.push_back(size);
  if (shape.empty())
    shape.push_back(1);
  return VectorType::get(shape, type.getElementType());
}

/// `operand` of `contract` reshaped to the iteration space (see
/// iterationShapeOf, which must have allowed it) less the unit dimensions of
/// `lanesType`, and broadcast along the dimensions it does not index to
/// withoutUnitDims(lanesType): a register tile of several rows and columns
/// reads each row's and column's vector once.
Value toLanes(OpBuilder &b, vector::ContractionOp contract, unsigned operand,
              VectorType lanesType) {
  Value value = contract->getOperand(operand);
  VectorType full = *iterationShapeOf(contract, operand);
  SmallVector<int64_t> shape;
  for (auto [size, lanes] :
       llvm::zip_equal(full.getShape(), lanesType.getShape()))
    if (lanes != 1)
      shape.push_back(size);
  if (shape.empty())
    shape.push_back(1);
  // A widening cast (bf16 to f32) stays next to the product, where
  // linnet-cpu-use-bf16-dot-products looks for it: the shapes change before.
  auto widen = value.getDefiningOp<arith::ExtFOp>();
  if (widen)
    value = widen.getIn();
  Location loc = contract.getLoc();
  Type element = getElementTypeOrSelf(value.getType());
  auto reshaped = VectorType::get(shape, element);
  if (reshaped != value.getType())
    value = vector::ShapeCastOp::create(b, loc, reshaped, value);
  VectorType compact = withoutUnitDims(lanesType).clone(element);
  if (reshaped != compact)
    value = vector::BroadcastOp::create(b, loc, compact, value);
  if (widen)
    value = arith::ExtFOp::create(b, loc, compact.clone(full.getElementType()),
                                  value);
  return value;
}

/// The reduction into `acc` (a loop's iteration argument) that the loop body
/// performs on every iteration: a `vector.multi_reduction <add>`, or an
/// unmasked `vector.contract` (add) whose operands reshape to the iteration
/// space. `lanesType` is that space (what is reduced) and `dims` are the
/// reduced dimensions.
struct LaneReduction {
  Operation *op = nullptr;
  VectorType lanesType;
  SmallVector<int64_t> dims;
};

/// What `reduction` reduces, built before it in withoutUnitDims(lanesType):
/// the lanes of a sum, or a product's two factors (the second null for a
/// sum).
std::pair<Value, Value> buildLanes(OpBuilder &b, const LaneReduction &found) {
  if (auto reduce = dyn_cast<vector::MultiDimReductionOp>(found.op)) {
    Value source = reduce.getSource();
    VectorType compact = withoutUnitDims(found.lanesType);
    if (compact != source.getType())
      source = vector::ShapeCastOp::create(b, reduce.getLoc(), compact, source);
    return {source, nullptr};
  }
  auto contract = cast<vector::ContractionOp>(found.op);
  return {toLanes(b, contract, 0, found.lanesType),
          toLanes(b, contract, 1, found.lanesType)};
}

std::optional<LaneReduction> matchLaneReduction(Value acc) {
  if (!acc.hasOneUse() || !isa<FloatType>(getElementTypeOrSelf(acc.getType())))
    return std::nullopt;
  Operation *user = *acc.getUsers().begin();
  LaneReduction found;
  found.op = user;
  if (auto reduce = dyn_cast<vector::MultiDimReductionOp>(user)) {
    if (reduce.getKind() != vector::CombiningKind::ADD ||
        reduce.getAcc() != acc)
      return std::nullopt;
    found.lanesType = reduce.getSourceVectorType();
    llvm::append_range(found.dims, reduce.getReductionDims());
    return found;
  }
  auto contract = dyn_cast<vector::ContractionOp>(user);
  if (!contract || contract.getKind() != vector::CombiningKind::ADD ||
      contract.getAcc() != acc ||
      getElementTypeOrSelf(contract.getLhs().getType()) !=
          getElementTypeOrSelf(acc.getType()) ||
      getElementTypeOrSelf(contract.getRhs().getType()) !=
          getElementTypeOrSelf(acc.getType()))
    return std::nullopt;
  // Only where both operands reshape to the iteration space.
  std::optional<VectorType> lhs = iterationShapeOf(contract, 0),
                            rhs = iterationShapeOf(contract, 1);
  if (!lhs || !rhs)
    return std::nullopt;
  // The whole iteration space: each dimension is the operand's that indexes
  // it (the other has 1 there).
  SmallVector<int64_t> lanes;
  for (auto [l, r] : llvm::zip_equal(lhs->getShape(), rhs->getShape())) {
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    lanes.push_back(std::max(l, r));
  }
  found.lanesType = VectorType::get(lanes, lhs->getElementType());
  for (auto [d, iterator] : llvm::enumerate(contract.getIteratorTypesArray()))
    if (iterator == vector::IteratorType::reduction)
      found.dims.push_back(d);
  return found;
}

/// A reduction loop that folds every iteration's lanes into its accumulator
/// (a dot product along the innermost, contiguous dimension: the experts'
/// matmuls, a weight read row by row) pays a horizontal reduction per
/// iteration. Carry the unreduced lanes instead, added lane by lane (an FMA
/// for a product), and reduce them once after the loop.
void carryUnreducedLanes(RewriterBase &rewriter, scf::ForOp loop) {
  for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i) {
    BlockArgument acc = loop.getRegionIterArgs()[i];
    std::optional<LaneReduction> reduction = matchLaneReduction(acc);
    if (!reduction)
      continue;
    Value result = reduction->op->getResult(0);
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (!result.hasOneUse() || *result.getUsers().begin() != yield ||
        yield.getOperand(i) != result)
      continue;
    Location loc = reduction->op->getLoc();
    VectorType lanesType = withoutUnitDims(reduction->lanesType);
    rewriter.setInsertionPoint(loop);
    Value zero = arith::ConstantOp::create(rewriter, loc, lanesType,
                                           rewriter.getZeroAttr(lanesType));
    LaneReduction matched = *reduction;
    FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
        rewriter, zero, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &b, Location, ArrayRef<BlockArgument> carried) {
          b.setInsertionPoint(matched.op);
          auto [lhs, rhs] = buildLanes(b, matched);
          Value sum =
              rhs ? vector::FMAOp::create(b, loc, lhs, rhs, carried[0])
                        .getResult()
                  : arith::AddFOp::create(b, loc, carried[0], lhs).getResult();
          return SmallVector<Value>{sum};
        });
    if (failed(widened))
      return;
    auto newLoop = cast<scf::ForOp>(widened->getOperation());
    // The old accumulator now passes through the loop unchanged.
    rewriter.replaceOp(matched.op, newLoop.getRegionIterArgs()[i]);
    rewriter.setInsertionPointAfter(newLoop);
    Value lanes = newLoop.getResults().back();
    if (lanesType != matched.lanesType)
      lanes =
          vector::ShapeCastOp::create(rewriter, loc, matched.lanesType, lanes);
    Value init = newLoop.getResult(i);
    auto reduced = vector::MultiDimReductionOp::create(
        rewriter, loc, vector::CombiningKind::ADD, lanes, init, matched.dims);
    rewriter.replaceAllUsesExcept(init, reduced.getResult(), reduced);
    loop = newLoop;
  }
}

struct TileAndVectorizePass
    : linnet::impl::LinnetCodegenTileAndVectorizeBase<TileAndVectorizePass> {
  using Base::Base;

  /// The canonicalization patterns makeWholeTilesStatic applies, gathered
  /// once rather than for every op it makes static.
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet patterns(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName name : context->getRegisteredOperations())
      name.getCanonicalizationPatterns(patterns, context);
    canonicalization = std::move(patterns);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());

    // Register tiles and vectors, each op by its own configuration.
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (getLoweringConfig(op))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      linnet::LoweringConfigAttr config = getLoweringConfig(op);
      op->removeAttr(kLoweringConfigName);
      ArrayRef<int64_t> reduction = config.getReduction(),
                        vector = config.getVector();
      FailureOr<TiledLoops> reductionTiled =
          tileWithLoops(rewriter, op, reduction);
      if (failed(reductionTiled)) {
        op.emitWarning("linnet codegen: could not tile; left as scalar loops");
        continue;
      }
      linalg::LinalgOp blocked = reductionTiled->op;
      // A dynamic outer dimension whose vector tile spans several iterations
      // (the rows of a register tile) is split: whole tiles are vectorized
      // with static sizes and the rest (fewer rows than a tile: a decode's
      // one) one at a time, instead of a masked tile computing padding.
      SmallVector<std::pair<linalg::LinalgOp, SmallVector<int64_t>>> parts = {
          {blocked, SmallVector<int64_t>(vector)}};
      std::optional<unsigned> split;
      if (vectorize)
        if (std::optional<unsigned> d = rowDimensionToSplit(blocked, vector))
          if (linalg::LinalgOp rest =
                  splitOffRemainder(rewriter, parts[0].first, *d, vector[*d])) {
            SmallVector<int64_t> single(vector);
            single[*d] = 1;
            parts.push_back({rest, single});
            split = d;
          }
      for (auto [index, part] : llvm::enumerate(parts)) {
        auto &[partOp, sizes] = part;
        FailureOr<TiledLoops> loops = tileWithLoops(rewriter, partOp, sizes);
        FailureOr<linalg::LinalgOp> tiled =
            failed(loops) ? FailureOr<linalg::LinalgOp>(failure())
            : index == 0 && split
                ? makeWholeTilesStatic(rewriter, *loops, *split,
                                       canonicalization)
                : FailureOr<linalg::LinalgOp>(loops->op);
        if (failed(tiled)) {
          partOp.emitWarning(
              "linnet codegen: could not tile; left as scalar loops");
          continue;
        }
        (*tiled)->removeAttr(kLoweringConfigName);
        if (vectorize)
          (void)vectorizeTile(rewriter, *tiled, sizes);
      }
    }

    // Masks move into the transfers (before any canonicalization can put a
    // second op into a `vector.mask` region), and generic contractions that
    // vectorized to multiply + reduce become `vector.contract`.
    RewritePatternSet patterns(&getContext());
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    patterns.add<UnmaskZeroPaddedContraction>(&getContext());
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    // The accumulator tile of a contraction is read and written at the same
    // place in every iteration of the reduction loop: carry it in registers
    // (an iter_arg) instead, innermost loops first.
    SmallVector<scf::ForOp> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      moveLoopInvariantCode(loop);
      (void)hoistLoopInvariantSubsets(rewriter, loop);
    }
    loops.clear();
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      carryUnreducedLanes(rewriter, loop);
  }

  FrozenRewritePatternSet canonicalization;
};

} // namespace

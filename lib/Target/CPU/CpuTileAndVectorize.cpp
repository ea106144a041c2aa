//===- CpuTileAndVectorize.cpp - dispatch regions, tiling, vectorization --===//
//
// The performance-critical step of the CPU pipeline, on tensors. A dispatch
// region is one root linalg operation with the producers fused into it; the
// root is tiled with an `scf.forall` (one tile per thread, later an OpenMP
// work-sharing loop) and then every operation in the region is tiled again to
// register-sized tiles and vectorized. Contractions keep an 8x16 accumulator
// in registers across the reduction loop, which is what makes matmuls fast.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUTILEANDVECTORIZE
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Marks an operation that must not become the root of a new dispatch region
/// (it already is one, or tiling it failed).
constexpr llvm::StringLiteral kDispatchedMarker = "linnet.cpu.dispatched";

/// Tile sizes of one operation at the three levels of the CPU schedule.
struct CpuTileSizes {
  /// `scf.forall` tile: one per thread.
  SmallVector<int64_t> thread;
  /// `scf.for` block of the reduction dimensions (contractions only).
  SmallVector<int64_t> reductionBlock;
  /// `scf.for` tile that becomes one vector operation.
  SmallVector<int64_t> vector;
};

bool isContraction(linalg::LinalgOp op) {
  return op.getNumReductionLoops() > 0 && linalg::isaContractionOpInterface(op);
}

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

CpuTileSizes
computeTileSizes(linalg::LinalgOp op,
                 const linnet::LinnetCpuTileAndVectorizeOptions &o) {
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
  if (succeeded(dims) && readsAlongReduction(op, *dims)) {
    // Both operands run along k (a weight in PyTorch's [out, in] layout):
    // each output is a dot product of two contiguous rows, with the lanes
    // along k (carried unreduced through the k loop, see
    // carryUnreducedLanes). Threads split m and n.
    for (unsigned d : dims->batch)
      sizes.thread[d] = 1;
    for (unsigned d : dims->m)
      sizes.thread[d] = 1;
    for (unsigned d : dims->n)
      sizes.thread[d] = 1;
    unsigned k = dims->k.back();
    sizes.vector[k] = clampToRange(o.vectorLength, ranges[k]);
    if (!dims->m.empty()) {
      unsigned m = dims->m.back();
      sizes.thread[m] = clampToRange(o.contractionThreadTile[0], ranges[m]);
    }
    if (!dims->n.empty()) {
      unsigned n = dims->n.back();
      constexpr int64_t kTilesPerRegion = 16;
      int64_t chunk =
          ShapedType::isDynamic(ranges[n])
              ? o.contractionThreadTile[1]
              : llvm::alignTo(llvm::divideCeil(ranges[n], kTilesPerRegion), 8);
      sizes.thread[n] = clampToRange(chunk, ranges[n]);
    }
    return sizes;
  }
  if (succeeded(dims)) {
    for (unsigned d : dims->batch)
      sizes.thread[d] = 1;
    for (unsigned d : dims->m)
      sizes.thread[d] = 1;
    for (unsigned d : dims->n)
      sizes.thread[d] = 1;
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
  // tile splits the outermost parallel loop that is not a unit dimension.
  unsigned inner = numLoops - 1;
  sizes.vector[inner] = clampToRange(o.vectorLength, ranges[inner]);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < numLoops; ++d) {
    if (iterators[d] != utils::IteratorType::parallel || ranges[d] == 1)
      continue;
    constexpr int64_t kTilesPerRegion = 16;
    int64_t chunk;
    if (ShapedType::isDynamic(ranges[d]))
      chunk = d == inner ? 32 * o.vectorLength : 8;
    else
      chunk = llvm::divideCeil(ranges[d], kTilesPerRegion);
    if (d == inner)
      chunk = llvm::alignTo(chunk, o.vectorLength);
    sizes.thread[d] = clampToRange(chunk, ranges[d]);
    break;
  }
  return sizes;
}

SmallVector<OpFoldResult> toFoldResults(MLIRContext *ctx,
                                        ArrayRef<int64_t> sizes) {
  Builder b(ctx);
  return llvm::map_to_vector(
      sizes, [&](int64_t s) -> OpFoldResult { return b.getIndexAttr(s); });
}

/// The producers that join `root`'s dispatch region: for a contraction only
/// the parallel producer of its accumulator (a fill, a broadcast bias);
/// otherwise every non-contraction linalg producer in the same block all of
/// whose users join too (so nothing is computed twice across regions).
llvm::SmallPtrSet<Operation *, 8>
collectFusibleProducers(linalg::LinalgOp root) {
  llvm::SmallPtrSet<Operation *, 8> candidates;
  if (isContraction(root)) {
    for (OpOperand &initOperand : root.getDpsInitsMutable()) {
      auto init = initOperand.get().getDefiningOp<linalg::LinalgOp>();
      if (init && init.getNumReductionLoops() == 0 && init->hasOneUse() &&
          init->getBlock() == root->getBlock())
        candidates.insert(init);
    }
    return candidates;
  }
  SmallVector<Operation *> worklist = {root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      auto producer = operand.getDefiningOp<linalg::LinalgOp>();
      if (!producer || isContraction(producer) ||
          producer->getBlock() != root->getBlock() ||
          !candidates.insert(producer).second)
        continue;
      worklist.push_back(producer);
    }
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *op : llvm::to_vector(candidates)) {
      bool allUsersJoin = llvm::all_of(op->getUsers(), [&](Operation *user) {
        return user == root.getOperation() || candidates.contains(user);
      });
      if (!allUsersJoin) {
        candidates.erase(op);
        changed = true;
      }
    }
  }
  return candidates;
}

/// Erases operations left without users after fusion, producers first made
/// dead by their consumers' removal.
void eraseDeadOps(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  SmallVector<Operation *> pending(ops.begin(), ops.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation *&op : pending) {
      if (op && op->use_empty()) {
        rewriter.eraseOp(op);
        op = nullptr;
        changed = true;
      }
    }
  }
}

/// Tiles `root` with an `scf.forall` and fuses its region's producers.
LogicalResult formDispatchRegion(RewriterBase &rewriter, linalg::LinalgOp root,
                                 const CpuTileSizes &sizes) {
  if (llvm::all_of(sizes.thread, [](int64_t s) { return s == 0; }))
    return failure();
  llvm::SmallPtrSet<Operation *, 8> fusible = collectFusibleProducers(root);

  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(toFoldResults(root->getContext(), sizes.thread));
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (fusible.contains(producer.getOwner()))
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        return std::nullopt;
      });

  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
  if (failed(result))
    return failure();
  for (Operation *tiled : result->tiledAndFusedOps)
    tiled->setAttr(kDispatchedMarker, rewriter.getUnitAttr());
  for (OpResult res : root->getResults())
    if (Value replacement = result->replacements.lookup(res))
      rewriter.replaceAllUsesWith(res, replacement);
  SmallVector<Operation *> dead = {root};
  llvm::append_range(dead, result->fusedProducers);
  eraseDeadOps(rewriter, dead);
  return success();
}

/// Tiles `op` with `scf.for` loops; returns the tiled operation.
FailureOr<linalg::LinalgOp> tileWithLoops(RewriterBase &rewriter,
                                          linalg::LinalgOp op,
                                          ArrayRef<int64_t> sizes) {
  if (llvm::all_of(sizes, [](int64_t s) { return s == 0; }))
    return op;
  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  tiling.setTileSizes(toFoldResults(op->getContext(), sizes));
  // Reduction loops innermost: the accumulator tile stays in registers.
  SmallVector<int64_t> interchange;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::parallel)
      interchange.push_back(d);
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      interchange.push_back(d);
  tiling.setInterchange(interchange);

  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> result = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), tiling);
  if (failed(result))
    return failure();
  rewriter.replaceOp(op, result->replacements);
  auto tiled = dyn_cast<linalg::LinalgOp>(result->tiledOps.back());
  if (!tiled)
    return failure();
  return tiled;
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

/// Whether `op` only moves data: a generic whose body yields one of its
/// inputs unchanged (a transpose, a broadcast, a copy).
bool isDataMovement(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      generic.getNumDpsInputs() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
}

/// Makes a generic contraction a named op (linalg.matmul, ...) where that
/// keeps its indexing maps. MLIR 22's specialization turns a matmul that
/// reads its right operand transposed into a plain linalg.matmul, dropping
/// the transpose: a specialization that changes the maps is discarded.
void specializeContraction(RewriterBase &rewriter, linalg::GenericOp generic) {
  rewriter.setInsertionPoint(generic);
  auto trial = cast<linalg::GenericOp>(rewriter.clone(*generic));
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, trial);
  if (failed(named)) {
    rewriter.eraseOp(trial);
    return;
  }
  if (named->getIndexingMapsArray() != generic.getIndexingMapsArray()) {
    rewriter.eraseOp(*named);
    return;
  }
  rewriter.replaceOp(generic, named->getOperation()->getResults());
}

/// Puts the operations in the form the rest of the pass expects: elementwise
/// producers fused into their single consumer, then contractions as named
/// ops (they vectorize straight to `vector.contract`, masks included), and
/// everything else as `linalg.generic`.
LogicalResult prepareOps(func::FuncOp func, RewriterBase &rewriter) {
  // Everything generic first, so that a transpose fuses into the matmul
  // that reads it (its indexing map then reads the weight in place).
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    if (!isa<linalg::GenericOp>(op.getOperation()))
      (void)linalg::generalizeNamedOp(rewriter, op);
  }
  // A producer is fused where its consumer reads each of its elements once,
  // or where it only moves data. Through a broadcasting or reducing map a
  // computing producer (a SiLU feeding the down projection of an expert)
  // would be recomputed for every element of the loops the map leaves out.
  RewritePatternSet patterns(func.getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
    return producer && producer->hasOneUse() && consumer &&
           (consumer.getMatchingIndexingMap(fused).isPermutation() ||
            isDataMovement(producer));
  });
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  for (linalg::GenericOp generic : generics)
    if (isContraction(generic))
      specializeContraction(rewriter, generic);
  return success();
}

/// Whether `value` is a vector read whose masked-off lanes are zero (through
/// an optional widening cast such as bf16 -> f32).
bool isZeroPaddedRead(Value value) {
  while (Operation *cast = value.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::ExtSIOp, arith::ExtUIOp>(cast))
      break;
    value = cast->getOperand(0);
  }
  Operation *def = value.getDefiningOp();
  if (auto mask = dyn_cast_if_present<vector::MaskOp>(def))
    def = mask.getMaskableOp();
  auto read = dyn_cast_if_present<vector::TransferReadOp>(def);
  if (!read)
    return false;
  Value padding = read.getPadding();
  return matchPattern(padding, m_AnyZeroFloat()) ||
         matchPattern(padding, m_Zero());
}

/// Drops the mask of a `vector.contract` whose operands are zero-padded reads:
/// masked-off reduction lanes then add `0 * 0`, and masked-off parallel lanes
/// are never stored (the accumulator's write is masked). The unmasked
/// contraction lowers to plain broadcasts and FMAs instead of scalar code.
struct UnmaskZeroPaddedContraction : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MaskOp mask,
                                PatternRewriter &rewriter) const override {
    auto contract =
        dyn_cast_if_present<vector::ContractionOp>(mask.getMaskableOp());
    if (!contract || mask.hasPassthru() ||
        !isZeroPaddedRead(contract.getLhs()) ||
        !isZeroPaddedRead(contract.getRhs()))
      return failure();
    rewriter.setInsertionPoint(mask);
    Operation *unmasked = rewriter.clone(*contract);
    rewriter.replaceOp(mask, unmasked->getResults());
    return success();
  }
};

/// `operand` of `contract` as a vector of the whole iteration space, where
/// that is only a reshape: the dimensions its indexing map leaves out have
/// size 1 and the others come in order. Null otherwise.
Value toIterationShape(OpBuilder &b, vector::ContractionOp contract,
                       unsigned operand) {
  AffineMap map = contract.getIndexingMapsArray()[operand];
  SmallVector<int64_t> shape(map.getNumDims(), 1);
  Value value = contract->getOperand(operand);
  auto type = cast<VectorType>(value.getType());
  int64_t last = -1;
  for (auto [position, result] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(result);
    if (!dim || int64_t(dim.getPosition()) <= last)
      return nullptr;
    last = dim.getPosition();
    shape[last] = type.getDimSize(position);
  }
  auto full = VectorType::get(shape, type.getElementType());
  if (full == type)
    return value;
  return vector::ShapeCastOp::create(b, contract.getLoc(), full, value);
}

/// The reduction into `acc` (a loop's iteration argument) that the loop body
/// performs on every iteration: a `vector.multi_reduction <add>`, or an
/// unmasked `vector.contract` (add) whose operands reshape to the iteration
/// space. `lanes(b)` builds, before the reduction, what it reduces (a
/// product's factors for a contraction) and `dims` are the reduced
/// dimensions.
struct LaneReduction {
  Operation *op = nullptr;
  SmallVector<int64_t> dims;
  /// The factors of each lane (rhs null for a plain sum).
  std::function<std::pair<Value, Value>(OpBuilder &)> lanes;
};

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
    llvm::append_range(found.dims, reduce.getReductionDims());
    found.lanes = [reduce](OpBuilder &) mutable {
      return std::pair<Value, Value>(reduce.getSource(), nullptr);
    };
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
  {
    // Only where both operands reshape to the iteration space.
    OpBuilder probe(contract);
    for (unsigned operand : {0u, 1u}) {
      Value shaped = toIterationShape(probe, contract, operand);
      if (!shaped)
        return std::nullopt;
      if (shaped != contract->getOperand(operand))
        shaped.getDefiningOp()->erase();
    }
  }
  for (auto [d, iterator] : llvm::enumerate(contract.getIteratorTypesArray()))
    if (iterator == vector::IteratorType::reduction)
      found.dims.push_back(d);
  found.lanes = [contract](OpBuilder &b) mutable {
    return std::pair<Value, Value>(toIterationShape(b, contract, 0),
                                   toIterationShape(b, contract, 1));
  };
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
    // The lanes' type: the iteration space of the reduction.
    auto accType = cast<VectorType>(acc.getType());
    SmallVector<int64_t> shape;
    {
      OpBuilder probe(reduction->op);
      auto [lhs, rhs] = reduction->lanes(probe);
      shape.assign(cast<VectorType>(lhs.getType()).getShape().begin(),
                   cast<VectorType>(lhs.getType()).getShape().end());
      for (Value made : {lhs, rhs})
        if (made && made.getDefiningOp() &&
            isa<vector::ShapeCastOp>(made.getDefiningOp()) && made.use_empty())
          made.getDefiningOp()->erase();
    }
    auto lanesType = VectorType::get(shape, accType.getElementType());
    rewriter.setInsertionPoint(loop);
    Value zero = arith::ConstantOp::create(rewriter, loc, lanesType,
                                           rewriter.getZeroAttr(lanesType));
    LaneReduction matched = *reduction;
    FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
        rewriter, zero, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &b, Location, ArrayRef<BlockArgument> carried) {
          b.setInsertionPoint(matched.op);
          auto [lhs, rhs] = matched.lanes(b);
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
    Value init = newLoop.getResult(i);
    auto reduced = vector::MultiDimReductionOp::create(
        rewriter, loc, vector::CombiningKind::ADD, lanes, init, matched.dims);
    rewriter.replaceAllUsesExcept(init, reduced.getResult(), reduced);
    loop = newLoop;
  }
}

struct CpuTileAndVectorizePass
    : linnet::impl::LinnetCpuTileAndVectorizeBase<CpuTileAndVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    linnet::LinnetCpuTileAndVectorizeOptions options;
    options.vectorize = vectorize;
    options.contractionThreadTile.assign(contractionThreadTile.begin(),
                                         contractionThreadTile.end());
    options.contractionRegisterTile.assign(contractionRegisterTile.begin(),
                                           contractionRegisterTile.end());
    options.contractionReductionTile = contractionReductionTile;
    options.vectorLength = vectorLength;
    if (options.contractionThreadTile.size() != 2)
      options.contractionThreadTile = {64, 256};
    if (options.contractionRegisterTile.size() != 2)
      options.contractionRegisterTile = {8, 16};

    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    if (failed(prepareOps(func, rewriter)))
      return signalPassFailure();

    // Dispatch regions, consumers first so producers fuse into them.
    while (true) {
      linalg::LinalgOp root;
      func.walk<WalkOrder::PostOrder, ReverseIterator>(
          [&](linalg::LinalgOp op) {
            // An op inside an scf.forall is in a dispatch region already
            // (one the lowering made, as for linnet.expert_matmul).
            if (op->hasAttr(kDispatchedMarker) ||
                !op.hasPureTensorSemantics() ||
                op->getParentOfType<scf::ForallOp>())
              return WalkResult::advance();
            root = op;
            return WalkResult::interrupt();
          });
      if (!root)
        break;
      CpuTileSizes sizes = computeTileSizes(root, options);
      if (failed(formDispatchRegion(rewriter, root, sizes)))
        root->setAttr(kDispatchedMarker, rewriter.getUnitAttr());
    }

    // Register tiles and vectors inside every region.
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      op->removeAttr(kDispatchedMarker);
      ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      CpuTileSizes sizes = computeTileSizes(op, options);
      FailureOr<linalg::LinalgOp> tiled =
          tileWithLoops(rewriter, op, sizes.reductionBlock);
      if (succeeded(tiled))
        tiled = tileWithLoops(rewriter, *tiled, sizes.vector);
      if (failed(tiled)) {
        op.emitWarning("linnet-cpu: could not tile; left as scalar loops");
        continue;
      }
      if (options.vectorize)
        (void)vectorizeTile(rewriter, *tiled, sizes.vector);
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
    SmallVector<LoopLikeOpInterface> loops;
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (LoopLikeOpInterface loop : loops) {
      moveLoopInvariantCode(loop);
      (void)hoistLoopInvariantSubsets(rewriter, loop);
    }
    loops.clear();
    func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (LoopLikeOpInterface loop : loops)
      carryUnreducedLanes(rewriter, cast<scf::ForOp>(loop.getOperation()));
  }
};

} // namespace

//===- FormDispatchRegions.cpp - one scf.forall per root op ---------------===//
//
// A dispatch region is one root operation tiled with an scf.forall (a
// thread's share on the CPU, later an OpenMP work-sharing loop; a block on a
// GPU) with its producers fused into the tile. The tile sizes are the root's
// lowering configuration's `thread` sizes. A root is a linalg op or a linnet
// op tiled as an op (attention, the delta rule, the causal convolution:
// TilingInterface), whose tile is then the same op on slices, lowered later
// inside the region.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Codegen/Passes.h"
#include "linnet/Codegen/RowGather.h"
#include "linnet/Codegen/ShapeBounds.h"
#include "linnet/Codegen/SliceOfView.h"
#include "linnet/Codegen/UniformValue.h"
#include "linnet/Codegen/UnitAxes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENFORMDISPATCHREGIONS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::codegen::boundedElementCount;
using linnet::codegen::getLoweringConfig;
using linnet::codegen::indexCarryingAxis;
using linnet::codegen::isContraction;
using linnet::codegen::tileSizesAsFoldResults;

namespace {

/// Whether `op` fills its one result with one value and reads no tensor
/// (a `linalg.fill`, or a generic yielding a value from outside its body or
/// a constant: codegen::uniformValue): a tile of it costs nothing to
/// compute again, in each region that reads it.
bool isConstantFill(linalg::LinalgOp op) {
  return op.getNumDpsInits() == 1 &&
         llvm::none_of(
             op.getDpsInputs(),
             [](Value input) { return isa<ShapedType>(input.getType()); }) &&
         linnet::codegen::uniformValue(op).has_value();
}

/// Whether each tile of `op` costs no more to compute again, in every region
/// that reads it, than to read it from memory: an elementwise op (no
/// reduction loop, its inputs read element for element) whose inputs are
/// all in memory already (arguments, results of calls or of formed regions;
/// no linalg op computes them), as a block's residual sum `x + attention(x)`
/// that both the next norm and the block's last sum read.
bool isRecomputedElementwise(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() != 0 || op->getNumResults() != 1)
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return op.getMatchingIndexingMap(input).isPermutation() &&
           !input->get().getDefiningOp<linalg::LinalgOp>();
  });
}

/// The most iterations (all its loops together) of an op that each region
/// reading it may compute again, its tile of it, whatever its other readers
/// do: a decode step's norm of its row (a sum of 2048 squares, then 2048
/// products), which each projection reading the row then computes itself, or
/// a router's softmax over 256 experts. A product with a weight (a
/// contraction) is never computed again so: its weights would be read again.
constexpr int64_t kMaxIterationsComputedAgain = int64_t(1) << 16;

/// Whether `op` is small enough to be computed again by each region reading
/// it (see kMaxIterationsComputedAgain): all its loop ranges static.
bool isSmallToComputeAgain(linalg::LinalgOp op) {
  if (isContraction(op) || op->hasAttr(linnet::codegen::kOwnRegionName))
    return false;
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return false;
    iterations *= range;
    if (iterations > kMaxIterationsComputedAgain)
      return false;
  }
  return true;
}

/// Whether each region that reads `op` may compute its tile again, whatever
/// its other users do: a constant fill, an elementwise op of inputs in
/// memory, or a small op.
bool isComputedAgainFreely(linalg::LinalgOp op) {
  return isConstantFill(op) || isRecomputedElementwise(op) ||
         isSmallToComputeAgain(op);
}

/// Whether all of `op`'s loop ranges are static: of a product, a decode
/// step's GEMV, each block of which reads its whole input row (a prompt's
/// product, of a run-time row count, reads tiles of it from memory).
bool hasStaticLoops(linalg::LinalgOp op) {
  return llvm::none_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
}

bool hasTensorSemantics(Operation *op);

/// Whether `op` is a producer that tiles but is no linalg op and no root (a
/// routed product the lowering left for its consumer's region): each tile
/// of it reads weights, so only one tile of the region computes a part.
bool isTileableProducer(Operation *op) {
  return op && !isa<linalg::LinalgOp>(op) && isa<TilingInterface>(op) &&
         !getLoweringConfig(op) && hasTensorSemantics(op);
}

/// The producers that join `root`'s dispatch region (none a target keeps
/// apart, `linnet.own_region`): with `accumulatorOnly` (a contraction's)
/// only the parallel producer of its accumulator (a fill, a broadcast bias);
/// otherwise every non-contraction linalg producer in the same block all of
/// whose users join too (so nothing is computed twice across regions; with
/// `fuseReductions` contractions too, each tile computing its own part), and
/// a constant fill or an elementwise op of inputs in memory whatever its
/// other users do (each region computes its own tile again: a fill two
/// reductions share, a residual sum two regions read, then costs neither a
/// kernel nor a copy).
llvm::SmallPtrSet<Operation *, 8>
collectFusibleProducers(linalg::LinalgOp root, bool fuseReductions,
                        bool accumulatorOnly, bool tileableProducers) {
  llvm::SmallPtrSet<Operation *, 8> candidates;
  if (accumulatorOnly) {
    for (OpOperand &initOperand : root.getDpsInitsMutable()) {
      auto init = initOperand.get().getDefiningOp<linalg::LinalgOp>();
      if (init && init.getNumReductionLoops() == 0 &&
          (init->hasOneUse() || isConstantFill(init)) &&
          init->getBlock() == root->getBlock())
        candidates.insert(init);
    }
    return candidates;
  }
  SmallVector<Operation *> worklist = {root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      auto linalgProducer = dyn_cast_or_null<linalg::LinalgOp>(producer);
      bool fusible = linalgProducer
                         ? fuseReductions || !isContraction(linalgProducer)
                         : tileableProducers && isTileableProducer(producer);
      if (!fusible || producer->hasAttr(linnet::codegen::kOwnRegionName) ||
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
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && isComputedAgainFreely(linalgOp))
        continue;
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
/// dead by their consumers' removal. A size read of such an op's result (a
/// region's bound, taken of the input it fused) reads the size of the
/// destination it writes instead.
void eraseDeadOps(RewriterBase &rewriter, ArrayRef<Operation *> ops) {
  for (Operation *op : ops) {
    auto destination = dyn_cast<DestinationStyleOpInterface>(op);
    if (!destination)
      continue;
    for (OpResult result : op->getResults())
      for (OpOperand &use : llvm::make_early_inc_range(result.getUses()))
        if (auto dim = dyn_cast<tensor::DimOp>(use.getOwner()))
          rewriter.modifyOpInPlace(dim, [&] {
            use.set(destination.getTiedOpOperand(result)->get());
          });
  }
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

/// Whether every result of `op` is a tensor and it has no buffer operand.
bool hasTensorSemantics(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureTensorSemantics();
  auto isBuffer = [](Type type) { return isa<BaseMemRefType>(type); };
  return op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(),
                      [](Type type) { return isa<RankedTensorType>(type); }) &&
         llvm::none_of(op->getOperandTypes(), isBuffer);
}

/// Whether the tile `slice` takes, of at most `elements` elements, may hold
/// more than `maxBytes` (0: no limit). One of no constant bound is refused
/// only where an op other than a linalg op reads it (a prompt's delta rule,
/// tiled as an op with the sequence whole, would hold it in a buffer of no
/// bound); a linalg op's may bufferize into its consumer's tile.
bool exceedsTileBytes(tensor::ExtractSliceOp slice,
                      std::optional<int64_t> elements, int64_t maxBytes) {
  if (maxBytes <= 0)
    return false;
  if (!elements)
    return llvm::any_of(slice->getUsers(), [](Operation *user) {
      return !isa<linalg::LinalgOp>(user);
    });
  return *elements * (slice.getResultType().getElementTypeBitWidth() / 8) >
         maxBytes;
}

/// How many tiles of the region around `slice` (an `scf.forall`) read the
/// same part of what it slices: the iterations of the induction variables
/// its offsets do not depend on (none for a run-time count). A reduction
/// fused there is computed again, whole, by each of them.
std::optional<int64_t> tilesReadingAlike(tensor::ExtractSliceOp slice) {
  auto forall = slice->getParentOfType<scf::ForallOp>();
  if (!forall)
    return 1;
  llvm::SmallPtrSet<Value, 4> used;
  SmallVector<Value> worklist;
  llvm::SmallPtrSet<Operation *, 16> visited;
  for (OpFoldResult offset : slice.getMixedOffsets())
    if (auto value = dyn_cast<Value>(offset))
      worklist.push_back(value);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner()->getParentOp() == forall)
        used.insert(argument);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!def || !forall->isAncestor(def) || !visited.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  int64_t alike = 1;
  for (auto [iv, lb, ub, step] :
       llvm::zip_equal(forall.getInductionVars(), forall.getMixedLowerBound(),
                       forall.getMixedUpperBound(), forall.getMixedStep())) {
    if (used.contains(iv))
      continue;
    std::optional<int64_t> low = getConstantIntValue(lb),
                           high = getConstantIntValue(ub),
                           stride = getConstantIntValue(step);
    if (!low || !high || !stride)
      return std::nullopt;
    alike *= llvm::divideCeil(*high - *low, *stride);
  }
  return alike;
}

/// The most iterations a region may spend computing again, in tiles that
/// read the same part, a reduction fused into it. A shared expert's gate
/// (a sum over 2048 elements for one output) in each of 256 tiles of a
/// hidden row (2^19), or a layer's norm (a sum of 2048 squares) in each of
/// the 1537 tiles of a DeltaNet's input projections (2^21.6), is cheaper
/// than a kernel of its own; the shared expert's gate and up projections
/// (2048 x 512 each) in each of those 256 tiles (2^28), or the final norm's
/// sum in each of the LM head's 31040 tiles (2^25.9), are not.
constexpr int64_t kMaxRecomputedIterations = int64_t(1) << 23;

/// Whether fusing the reduction `producer` at `slice` (a tile of at most
/// `elements` elements) would compute it again in more iterations than that
/// (or in a number not known here).
bool recomputesTooMuch(tensor::ExtractSliceOp slice,
                       std::optional<int64_t> elements,
                       linalg::LinalgOp producer) {
  std::optional<int64_t> alike = tilesReadingAlike(slice);
  if (alike && *alike == 1)
    return false;
  if (!alike || !elements)
    return true;
  int64_t iterations = *alike * *elements;
  SmallVector<int64_t> ranges = producer.getStaticLoopRanges();
  for (auto [range, iterator] :
       llvm::zip_equal(ranges, producer.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::reduction)
      continue;
    if (ShapedType::isDynamic(range))
      return true;
    iterations *= range;
  }
  return iterations > kMaxRecomputedIterations;
}

/// Whether fusing the reduction `producer` at `slice` (a tile of its
/// result) would give a block more of its outputs, along some dimension,
/// than one of its own tiles has: a router's 256 logits under a softmax's
/// row, each a product over 2048, in one block instead of the product's own
/// 64 x 64 tiles on the tensor cores (or its GEMV's 8 outputs a block),
/// which would read all its weights in each row's block. A dimension its
/// own tile takes whole (0) or a slice of no bound it cannot widen.
bool widensReductionTile(tensor::ExtractSliceOp slice, OpResult result,
                         linalg::LinalgOp producer) {
  linnet::LoweringConfigAttr config = getLoweringConfig(producer);
  if (!config)
    return true;
  ArrayRef<int64_t> tile = config.getThread();
  AffineMap written = producer.getIndexingMapMatchingResult(result);
  if (tile.size() != producer.getNumLoops() ||
      !written.isProjectedPermutation())
    return true;
  for (unsigned r = 0; r < written.getNumResults(); ++r) {
    int64_t own = tile[written.getDimPosition(r)];
    if (own == 0)
      continue;
    FailureOr<int64_t> extent = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        ValueBoundsConstraintSet::Variable(slice.getResult(), int64_t(r)),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(extent) || *extent > own)
      return true;
  }
  return false;
}

/// Whether the tile `slice` takes of `producer`'s result stays in registers
/// (kResultInRegistersName): the producer is so marked and one op of
/// parallel loops reads the tile, once, through a permutation, and no other
/// such tile; or the producer is a constant fill and the tile is the output
/// of such a product.
bool keptInRegisters(tensor::ExtractSliceOp slice, linalg::LinalgOp producer) {
  auto marked = [](Operation *op) {
    return op->hasAttr(linnet::codegen::kResultInRegistersName);
  };
  if (!slice->hasOneUse())
    return false;
  OpOperand &use = *slice->use_begin();
  auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!reader)
    return false;
  if (isConstantFill(producer))
    return marked(reader) && reader.isDpsInit(&use);
  // The reader takes one such tile, once (the SiLU of a gate times an up
  // projection reads two products: each would be a tile in memory).
  auto ofMarked = [&](Value operand) {
    if (auto tile = operand.getDefiningOp<tensor::ExtractSliceOp>())
      operand = tile.getSource();
    Operation *definition = operand.getDefiningOp();
    return definition && marked(definition);
  };
  return marked(producer) && !reader.isDpsInit(&use) &&
         reader.getNumLoops() == reader.getNumParallelLoops() &&
         reader.getMatchingIndexingMap(&use).isPermutation() &&
         llvm::count_if(reader->getOperands(), ofMarked) == 1;
}

/// Whether the tile `slice` takes of `producer` is read only as an input of
/// products kept in registers and `producer` gathers rows (RowGather.h): a
/// tensor-core product then stages its tile's rows from the gather's
/// source itself, and the tile is never held whole (a prompt's routed
/// experts' input rows, sorted by expert: no 384 MiB copy a layer at 8k
/// tokens).
bool stagedByProducts(tensor::ExtractSliceOp slice, linalg::LinalgOp producer) {
  return !slice->use_empty() && linnet::codegen::matchRowGather(producer) &&
         llvm::all_of(slice->getUses(), [](OpOperand &use) {
           auto product = dyn_cast<linalg::LinalgOp>(use.getOwner());
           return product &&
                  product->hasAttr(linnet::codegen::kResultInRegistersName) &&
                  product.isDpsInput(&use);
         });
}

/// Whether the tile `slice` takes of `result` (a fusible producer's) may be
/// computed in the region around it: within `maxFusedTileBytes` (unless
/// it stays in registers, keptInRegisters, or products stage it,
/// stagedByProducts), and for a
/// reduction (with `fuseReductions`) neither computed again too often nor
/// wider than the producer's own tile, unless `widenSmall` (the region
/// reads a weight, a static product's) and it is small: a gated norm's sums
/// of squares over 32 heads, which the output projection's GEMV then
/// computes in each block.
bool admitsTile(tensor::ExtractSliceOp slice, OpResult result,
                bool fuseReductions, int64_t maxFusedTileBytes,
                bool widenSmall = false) {
  auto producer = cast<linalg::LinalgOp>(result.getOwner());
  bool reduction = producer.getNumReductionLoops() > 0;
  if (reduction && !fuseReductions)
    return false;
  std::optional<int64_t> elements;
  if (maxFusedTileBytes > 0 || reduction)
    elements = boundedElementCount(slice.getResult());
  return (keptInRegisters(slice, producer) ||
          stagedByProducts(slice, producer) ||
          !exceedsTileBytes(slice, elements, maxFusedTileBytes)) &&
         !(reduction && (recomputesTooMuch(slice, elements, producer) ||
                         (!(widenSmall && isSmallToComputeAgain(producer)) &&
                          widensReductionTile(slice, result, producer))));
}

/// Whether the tile `slice` takes of a tileable producer's result (see
/// isTileableProducer) may be computed in the region around it: within
/// `maxFusedTileBytes`, and no two of the region's tiles reading it alike.
bool admitsProductTile(tensor::ExtractSliceOp slice,
                       int64_t maxFusedTileBytes) {
  std::optional<int64_t> alike = tilesReadingAlike(slice);
  return alike && *alike == 1 &&
         !exceedsTileBytes(slice, boundedElementCount(slice.getResult()),
                           maxFusedTileBytes);
}

/// Reads the element `extract` takes, of a linalg op's result computed
/// outside `forall`, from a slice of that one element: a routed expert's id
/// in the region of its product, which the slice lets the region compute
/// itself.
void extractFromSlice(RewriterBase &rewriter, scf::ForallOp forall,
                      tensor::ExtractOp extract) {
  Operation *producer = extract.getTensor().getDefiningOp();
  if (!isa_and_nonnull<linalg::LinalgOp>(producer) ||
      forall->isAncestor(producer))
    return;
  auto type = cast<RankedTensorType>(extract.getTensor().getType());
  OpFoldResult one = rewriter.getIndexAttr(1);
  SmallVector<OpFoldResult> offsets = getAsOpFoldResult(extract.getIndices());
  SmallVector<OpFoldResult> ones(type.getRank(), one);
  rewriter.setInsertionPoint(extract);
  Value slice = tensor::ExtractSliceOp::create(
      rewriter, extract.getLoc(), extract.getTensor(), offsets, ones, ones);
  Value zero = arith::ConstantIndexOp::create(rewriter, extract.getLoc(), 0);
  rewriter.replaceOpWithNewOp<tensor::ExtractOp>(
      extract, slice, SmallVector<Value>(type.getRank(), zero));
}

/// Takes `slice`, of a collapse_shape that only drops axes of size 1 (each
/// group at most one wider axis), of the collapse's source instead: the
/// unit axes at 0, each group's one wide axis (or its first) as the slice
/// takes the group. The result type stays (a rank-reducing slice).
void sliceThroughUnitCollapse(RewriterBase &rewriter,
                              tensor::ExtractSliceOp slice) {
  auto collapse = slice.getSource().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return;
  ArrayRef<int64_t> source = collapse.getSrcType().getShape();
  SmallVector<OpFoldResult> offsets, sizes, strides;
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  for (auto [index, group] :
       llvm::enumerate(collapse.getReassociationIndices())) {
    std::optional<int64_t> taken = indexCarryingAxis(source, group);
    if (!taken)
      return;
    for (int64_t axis : group) {
      bool isTaken = axis == *taken;
      offsets.push_back(isTaken ? slice.getMixedOffsets()[index] : zero);
      sizes.push_back(isTaken ? slice.getMixedSizes()[index] : one);
      strides.push_back(isTaken ? slice.getMixedStrides()[index] : one);
    }
  }
  rewriter.setInsertionPoint(slice);
  rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
      slice, slice.getResultType(), collapse.getSrc(), offsets, sizes, strides);
}

/// Whether `value` is a reshape (an expand_shape or collapse_shape), a
/// slice or a concatenation computed outside `forall`: what a tile reads
/// through to reach the producer (sliceOfViewSource).
bool isOutsideView(scf::ForallOp forall, Value value) {
  Operation *def = value.getDefiningOp();
  return (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                          tensor::ExtractSliceOp>(def) ||
          linnet::codegen::isConcatenation(value)) &&
         !forall->isAncestor(def);
}

/// Takes each slice `forall`'s body takes of a reshape or a slice outside it
/// of that view's source instead (then reshaped), where the slice is a box
/// of the source (sliceOfViewSource): o_proj's GEMV reads an attention's
/// heads through `[.., 16, 256] -> [.., 4096]`, the delta rule a head's q
/// of the causal convolution's 8192 channels through `[0:2048]` and `[..,
/// 16, 128]`. A view the body reads whole is first read through a slice of
/// all of it. The views left without users are erased, so that the
/// producer's users may all be inside.
void sliceThroughViews(RewriterBase &rewriter, scf::ForallOp forall) {
  SmallVector<OpOperand *> wholeReads;
  forall.getBody()->walk([&](linalg::LinalgOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (type && type.hasStaticShape() &&
          isOutsideView(forall, operand.get()) &&
          !operand.get().getDefiningOp<tensor::ExtractSliceOp>())
        wholeReads.push_back(&operand);
    }
  });
  for (OpOperand *operand : wholeReads) {
    Operation *op = operand->getOwner();
    auto type = cast<RankedTensorType>(operand->get().getType());
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0)),
        ones(type.getRank(), rewriter.getIndexAttr(1));
    Value whole = tensor::ExtractSliceOp::create(
        rewriter, op->getLoc(), operand->get(), zeros,
        getAsIndexOpFoldResult(rewriter.getContext(), type.getShape()), ones);
    rewriter.modifyOpInPlace(op, [&] { operand->set(whole); });
  }
  SmallVector<tensor::ExtractSliceOp> worklist;
  llvm::SetVector<Operation *> views;
  for (auto slice : forall.getBody()->getOps<tensor::ExtractSliceOp>())
    worklist.push_back(slice);
  while (!worklist.empty()) {
    tensor::ExtractSliceOp slice = worklist.pop_back_val();
    if (!isOutsideView(forall, slice.getSource()))
      continue;
    Operation *view = slice.getSource().getDefiningOp();
    SmallVector<tensor::ExtractSliceOp> taken;
    if (failed(linnet::codegen::sliceOfViewSource(rewriter, slice, taken)))
      continue;
    views.insert(view);
    // A concatenation's earlier inserts, and its empty tensor, die with it.
    for (auto insert = dyn_cast<tensor::InsertSliceOp>(view); insert;
         insert = insert.getDest().getDefiningOp<tensor::InsertSliceOp>())
      views.insert(insert.getDest().getDefiningOp());
    llvm::append_range(worklist, taken);
  }
  eraseDeadOps(rewriter, views.getArrayRef());
}

/// Whether every bound of `forall` is a constant: a decode step's region.
bool hasStaticGrid(scf::ForallOp forall) {
  return llvm::all_of(forall.getMixedUpperBound(), [](OpFoldResult bound) {
    return getConstantIntValue(bound).has_value();
  });
}

/// Fuses into `forall` the producers of the slices its body takes, as a
/// root's region takes them (see fuseIntoFormedRegions), each slice of a
/// unit-axes collapse first taken of its source, and with `throughReshapes`
/// each slice of another reshape; with `widenSmall` (see admitsTile) a
/// small reduction wider than its own tile too.
void fuseIntoRegion(RewriterBase &rewriter, scf::ForallOp forall,
                    bool fuseReductions, int64_t maxFusedTileBytes,
                    bool throughReshapes, bool widenSmall = false) {
  for (auto extract : llvm::make_early_inc_range(
           forall.getBody()->getOps<tensor::ExtractOp>()))
    extractFromSlice(rewriter, forall, extract);
  for (auto slice : llvm::make_early_inc_range(
           forall.getBody()->getOps<tensor::ExtractSliceOp>()))
    sliceThroughUnitCollapse(rewriter, slice);
  // Through views only in a region of a static grid (a decode step's): a
  // prompt's tiles, of a run-time row count, stay as they were.
  throughReshapes &= hasStaticGrid(forall);
  // Until no slice's producer joins: one joining may leave another's
  // users all inside (the original of a producer fused at two slices), or
  // bring in slices of reshapes.
  bool changed = true;
  while (changed) {
    changed = false;
    if (throughReshapes)
      sliceThroughViews(rewriter, forall);
    auto slices =
        llvm::to_vector(forall.getBody()->getOps<tensor::ExtractSliceOp>());
    for (tensor::ExtractSliceOp slice : slices) {
      if (slice->use_empty())
        continue;
      auto result = dyn_cast<OpResult>(slice.getSource());
      auto producer =
          result ? dyn_cast<linalg::LinalgOp>(result.getOwner()) : nullptr;
      if (!producer || !getLoweringConfig(producer) ||
          !producer.hasPureTensorSemantics() ||
          producer->hasAttr(linnet::codegen::kOwnRegionName) ||
          forall->isAncestor(producer))
        continue;
      bool inside = llvm::all_of(producer->getUsers(), [&](Operation *user) {
        return forall->isProperAncestor(user);
      });
      if ((!inside && !isComputedAgainFreely(producer)) ||
          !admitsTile(slice, result, fuseReductions, maxFusedTileBytes,
                      widenSmall))
        continue;
      SmallVector<LoopLikeOpInterface> loops = {
          cast<LoopLikeOpInterface>(forall.getOperation())};
      if (!scf::tileAndFuseProducerOfSlice(rewriter, slice, loops))
        continue;
      if (slice->use_empty())
        rewriter.eraseOp(slice);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      changed = true;
      break;
    }
  }
}

/// Fuses into each region the lowering formed (an scf.forall around a
/// special op lowered inside it: a decode step's delta rule, attention, a
/// routed expert's product) the producers of the slices its body takes, as
/// a root's region takes them: a DeltaNet's normalised q and k and its
/// gates, per head, in the delta rule's kernel; an expert's SiLU gate in its
/// down projection's. Slices in loops inside the body are left (their tile
/// would be computed each iteration). A slice of a reshape that drops unit
/// axes (a routed expert's input row) is first taken of its source, so that
/// the producer is in reach; with `throughReshapes` a slice of any reshape
/// that is a box of its source.
void fuseIntoFormedRegions(RewriterBase &rewriter, func::FuncOp func,
                           bool fuseReductions, int64_t maxFusedTileBytes,
                           bool throughReshapes) {
  SmallVector<scf::ForallOp> regions;
  func.walk([&](scf::ForallOp forall) {
    if (!forall->getParentOfType<scf::ForallOp>())
      regions.push_back(forall);
  });
  for (scf::ForallOp forall : regions)
    fuseIntoRegion(rewriter, forall, fuseReductions, maxFusedTileBytes,
                   throughReshapes);
}

/// Tiles `root` with an `scf.forall` and fuses its region's producers (a
/// linalg root's only: the special ops' operands come in whole; a
/// contraction's its accumulator's, and its inputs' only where no two of its
/// tiles read the same part of them, in tiles of a bound, and it is no
/// product kept in registers:
/// a tensor-core product reads its inputs from memory, and one whose tiles
/// share an input's part would compute it again in each: the weighted sum of
/// a prompt's routed experts takes in the gather of their rows back into slot
/// order). With `throughReshapes` a contraction of static loops (a decode
/// GEMV) takes in its input's producers as any root does, and a region of a
/// static grid whose root takes in its inputs then takes in the producers
/// of its slices of reshapes and slices too.
LogicalResult formDispatchRegion(RewriterBase &rewriter, TilingInterface root,
                                 ArrayRef<int64_t> threadSizes,
                                 bool fuseReductions, bool mapToBlocks,
                                 int64_t maxFusedTileBytes,
                                 bool throughReshapes, bool tileableProducers) {
  if (llvm::all_of(threadSizes, [](int64_t s) { return s == 0; }))
    return failure();
  llvm::SmallPtrSet<Operation *, 8> fusible;
  auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation());
  bool rootIsProduct = linalgRoot && isContraction(linalgRoot);
  bool takesInputs =
      linalgRoot &&
      (!rootIsProduct || (throughReshapes && hasStaticLoops(linalgRoot)));
  // A product's inputs' producers at slices no two tiles read alike.
  bool takesUnsharedInputs =
      linalgRoot && !takesInputs &&
      !linalgRoot->hasAttr(linnet::codegen::kResultInRegistersName);
  if (linalgRoot)
    fusible = collectFusibleProducers(linalgRoot, fuseReductions,
                                      /*accumulatorOnly=*/!takesInputs &&
                                          !takesUnsharedInputs,
                                      tileableProducers);
  llvm::SmallPtrSet<Operation *, 2> accumulators;
  if (takesUnsharedInputs)
    for (Value init : linalgRoot.getDpsInits())
      if (Operation *producer = init.getDefiningOp())
        accumulators.insert(producer);
  bool intoRegion = throughReshapes && takesInputs;

  scf::SCFTilingOptions tiling;
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setTileSizes(tileSizesAsFoldResults(root->getContext(), threadSizes));
  int64_t tiled = llvm::count_if(threadSizes, [](int64_t s) { return s != 0; });
  constexpr int64_t kLinearDims = 10; // #gpu.block<linear_dim_0 .. 9>
  if (mapToBlocks && tiled <= kLinearDims) {
    SmallVector<Attribute> mapping;
    for (int64_t d = 0; d < tiled; ++d)
      mapping.push_back(gpu::GPUBlockMappingAttr::get(
          root->getContext(), static_cast<gpu::MappingId>(
                                  int64_t(gpu::MappingId::LinearDim0) + d)));
    tiling.setMapping(mapping);
  }
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp slice, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *owner = producer.getOwner();
        if (takesUnsharedInputs && !accumulators.contains(owner) &&
            (tilesReadingAlike(slice) != std::optional<int64_t>(1) ||
             !boundedElementCount(slice.getResult())))
          return std::nullopt;
        if (!fusible.contains(owner) ||
            !(isa<linalg::LinalgOp>(owner)
                  ? admitsTile(slice, producer, fuseReductions,
                               maxFusedTileBytes)
                  : admitsProductTile(slice, maxFusedTileBytes)))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });

  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result))
    return failure();
  for (OpResult res : root->getResults())
    if (Value replacement = result->replacements.lookup(res))
      rewriter.replaceAllUsesWith(res, replacement);
  SmallVector<Operation *> dead = {root};
  llvm::append_range(dead, result->fusedProducers);
  eraseDeadOps(rewriter, dead);
  if (intoRegion && !result->loops.empty())
    if (auto forall =
            dyn_cast<scf::ForallOp>(result->loops.front().getOperation());
        forall && hasStaticGrid(forall))
      fuseIntoRegion(rewriter, forall, fuseReductions, maxFusedTileBytes,
                     /*throughReshapes=*/true,
                     /*widenSmall=*/rootIsProduct);
  return success();
}

struct FormDispatchRegionsPass
    : linnet::impl::LinnetCodegenFormDispatchRegionsBase<
          FormDispatchRegionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    if (fuseIntoLoweredRegions)
      fuseIntoFormedRegions(rewriter, func, fuseReductions, maxFusedTileBytes,
                            fuseThroughReshapes);
    // Consumers first, so producers fuse into them. An op inside an
    // scf.forall is in a dispatch region already (one formed here, or one
    // the lowering made, as for linnet.expert_matmul).
    // Roots that could not be tiled, left as they are.
    llvm::SmallPtrSet<Operation *, 16> refused;
    while (true) {
      TilingInterface root;
      func.walk<WalkOrder::PostOrder, ReverseIterator>([&](TilingInterface op) {
        if (!getLoweringConfig(op) || refused.contains(op) ||
            !hasTensorSemantics(op) || op->getParentOfType<scf::ForallOp>())
          return WalkResult::advance();
        root = op;
        return WalkResult::interrupt();
      });
      if (!root)
        break;
      // A producer every reader of which computes its tiles again is left
      // without users (but the slices fusion left unused): erased, not a
      // region of its own.
      for (Operation *user : llvm::make_early_inc_range(root->getUsers()))
        if (isOpTriviallyDead(user))
          rewriter.eraseOp(user);
      if (root->use_empty() && isMemoryEffectFree(root)) {
        rewriter.eraseOp(root);
        continue;
      }
      if (failed(formDispatchRegion(
              rewriter, root, getLoweringConfig(root).getThread(),
              fuseReductions, mapToBlocks, maxFusedTileBytes,
              fuseThroughReshapes, fuseTileableProducers)))
        refused.insert(root);
    }
  }
};

} // namespace

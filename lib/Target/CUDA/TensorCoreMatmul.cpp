//===- TensorCoreMatmul.cpp - matrix products on the tensor cores ---------===//
//
// A block tile of a product, 32 of the reduced depth at a time: the block
// copies its rows of A and B into two stages in shared memory, then each
// warp takes its tile's fragments from there with ldmatrix (the layout of
// PTX's mma.m16n8k16: lane l holds rows l / 4 and l / 4 + 8, depths
// 2 (l % 4) + {0, 1, 8, 9}, columns l / 4 of B and 2 (l % 4) + {0, 1} of
// the accumulators) and runs an mma.sync for each pair of its A and B
// fragments per 16 of the depth (2 x 8 in a 32 x 64 warp tile, 1 x 4 in a
// 16 x 32 one). Elements past the product's edges are staged as zero and
// not stored, so every lane of a warp runs every mma.sync, and every
// thread of the block every barrier. The sums are stored from the
// accumulators, or go through the op that reads them there.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreMatmul.h"

#include "IndexBuilder.h"

#include "HostBuffers.h"
#include "WarpReduction.h"
#include "linnet/Codegen/ShapeBounds.h"
#include "linnet/Codegen/UniformValue.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace linnet {

namespace {

/// Whether `value` is `arith.extf` of the bf16 block argument `argument`.
bool isExtended(Value value, BlockArgument argument) {
  auto extension = value.getDefiningOp<arith::ExtFOp>();
  return extension && extension.getIn() == argument &&
         argument.getType().isBF16();
}

/// Whether `op`'s body yields `out + extf(in0) * extf(in1)`, in any order.
bool isProductBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  Value yielded = body->getTerminator()->getOperand(0);
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  BlockArgument out = body->getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  BlockArgument lhs = body->getArgument(0), rhs = body->getArgument(1);
  return (isExtended(mul.getLhs(), lhs) && isExtended(mul.getRhs(), rhs)) ||
         (isExtended(mul.getLhs(), rhs) && isExtended(mul.getRhs(), lhs));
}

/// Of the loops `candidates`, the one of the largest extent (a dynamic one
/// counts as the largest), the later on a tie; none if there are none.
std::optional<unsigned> widest(ArrayRef<unsigned> candidates,
                               ArrayRef<int64_t> ranges) {
  std::optional<unsigned> best;
  auto extent = [&](unsigned d) {
    return ShapedType::isDynamic(ranges[d]) ? INT64_MAX : ranges[d];
  };
  for (unsigned d : candidates)
    if (!best || extent(d) >= extent(*best))
      best = d;
  return best;
}

/// The element of `operand` at loop indices `ivs` where `inBounds`, zero
/// elsewhere.
Value loadOrZero(OpBuilder &b, Location loc, linalg::LinalgOp op,
                 OpOperand &operand, ArrayRef<Value> ivs, Value inBounds) {
  return linnet::loadOrZero(
      b, loc, operand.get(),
      indicesAt(b, loc, op.getMatchingIndexingMap(&operand), ivs), inBounds);
}

/// The iteration of `epilogue`'s consumer that reads the product's sum at
/// loop indices `ivs` (the product's output written through `outMap`), run
/// on `sum`: its other inputs loaded, its body cloned, its results stored.
void applyEpilogue(OpBuilder &b, Location loc,
                   const TensorCoreEpilogue &epilogue, AffineMap outMap,
                   ArrayRef<Value> ivs, Value sum) {
  linalg::LinalgOp consumer = epilogue.consumer;
  OpOperand &tile = consumer->getOpOperand(epilogue.operand);
  // Consumer loop j indexes the tile's dimension d where its map reads j;
  // the product's sum there is at its loop outMap(d).
  AffineMap tileMap = consumer.getMatchingIndexingMap(&tile);
  SmallVector<Value> consumerIvs(consumer.getNumLoops());
  for (unsigned d = 0; d < tileMap.getNumResults(); ++d)
    consumerIvs[tileMap.getDimPosition(d)] = ivs[outMap.getDimPosition(d)];
  Block *body = consumer.getBlock();
  IRMapping mapping;
  for (OpOperand &operand : consumer->getOpOperands()) {
    BlockArgument argument = consumer.getMatchingBlockArgument(&operand);
    if (&operand == &tile)
      mapping.map(argument, sum);
    else if (!argument.use_empty())
      mapping.map(
          argument,
          memref::LoadOp::create(
              b, loc, operand.get(),
              indicesAt(b, loc, consumer.getMatchingIndexingMap(&operand),
                        consumerIvs)));
  }
  for (Operation &bodyOp : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
      mapping.map(index.getResult(), consumerIvs[index.getDim()]);
      continue;
    }
    b.clone(bodyOp, mapping);
  }
  for (auto [init, yielded] : llvm::zip_equal(
           consumer.getDpsInitsMutable(), body->getTerminator()->getOperands()))
    memref::StoreOp::create(
        b, loc, mapping.lookupOrDefault(yielded), init.get(),
        indicesAt(b, loc, consumer.getMatchingIndexingMap(&init), consumerIvs));
}

/// Whether `user` sets every element of its one output to one scalar,
/// through a permutation and reading no buffer (codegen::uniformValue: a
/// fill's, a value from outside a generic or a constant in it).
bool fillsWithOneValue(Operation *user) {
  auto op = dyn_cast<linalg::LinalgOp>(user);
  return op && op.getNumDpsInits() == 1 &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isPermutation() &&
         llvm::none_of(
             op.getDpsInputs(),
             [](Value input) { return isa<ShapedType>(input.getType()); }) &&
         codegen::uniformValue(op).has_value();
}

/// The buffer `user` copies whole into `tile` (memref.copy, or linalg.copy
/// as distributeOverThreads makes it), if it does.
Value copiedInto(Operation *user, Value tile) {
  if (auto copy = dyn_cast<memref::CopyOp>(user))
    return copy.getTarget() == tile ? copy.getSource() : Value();
  auto copy = dyn_cast<linalg::CopyOp>(user);
  return copy && copy.getOutputs()[0] == tile ? copy.getInputs()[0] : Value();
}

/// Whether loop `d` of `op` may run `size` times or more: a static extent
/// of at least that, or a run-time one with no smaller constant bound (an
/// operand's size it indexes, bounded by ValueBounds: the tile of a
/// region's loop is an `affine.min`).
bool mayReach(linalg::LinalgOp op, unsigned d, int64_t size) {
  int64_t extent = op.getStaticLoopRanges()[d];
  if (!ShapedType::isDynamic(extent))
    return extent >= size;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (unsigned r = 0; r < map.getNumResults(); ++r) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(r));
      if (!dim || dim.getPosition() != d)
        continue;
      std::optional<int64_t> bound =
          codegen::boundedSize(operand.get(), int64_t(r));
      if (bound && *bound < size)
        return false;
    }
  }
  return true;
}

/// Whether an op strictly between `first` and `last` (of one block, or
/// nested in such an op) writes a buffer that `reads` or `writes` views, or
/// reads one that `writes` views, or has effects it cannot name: whether
/// moving an access of those buffers from one end to the other could
/// change what it sees.
bool touchedBetween(Operation *first, Operation *last, ArrayRef<Value> reads,
                    ArrayRef<Value> writes) {
  auto among = [](Value value, ArrayRef<Value> buffers) {
    return llvm::any_of(
        buffers, [&](Value buffer) { return rootOf(buffer) == rootOf(value); });
  };
  for (Operation *op = first->getNextNode(); op && op != last;
       op = op->getNextNode()) {
    WalkResult result = op->walk([&](Operation *nested) {
      // A linalg op on buffers declares its own effects and holds pure ops;
      // an scf.if holds ops that declare theirs.
      auto interface = dyn_cast<MemoryEffectOpInterface>(nested);
      if (!interface)
        return isPure(nested) || isa<gpu::BarrierOp>(nested) ||
                       nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                   ? WalkResult::advance()
                   : WalkResult::interrupt();
      SmallVector<MemoryEffects::EffectInstance> effects;
      interface.getEffects(effects);
      for (const MemoryEffects::EffectInstance &effect : effects) {
        if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(
                effect.getEffect()))
          continue;
        Value value = effect.getValue();
        if (!value)
          return WalkResult::interrupt();
        bool isWrite = isa<MemoryEffects::Write>(effect.getEffect());
        if (among(value, writes) || (isWrite && among(value, reads)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return true;
  }
  return false;
}

/// Builds, at `b`, what the staged gather `gather` computes at its loop
/// indices `ivs`: the row's element, or `width` elements from it along the
/// last loop as a vector (0: one element). Its body is cloned, the read
/// made a vector load where `width` is set, the zero it yields off the
/// gathered rows a vector of zeros.
Value gatheredElements(OpBuilder &b, Location loc,
                       TensorCoreStagedGather gather, ArrayRef<Value> ivs,
                       int64_t width) {
  linalg::LinalgOp op = gather.op;
  Block *body = op.getBlock();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands())
    mapping.map(op.getMatchingBlockArgument(input),
                memref::LoadOp::create(
                    b, loc, input->get(),
                    indicesAt(b, loc, op.getMatchingIndexingMap(input), ivs)));
  Operation *read = gather.rows.read;
  Type element = read->getResult(0).getType();
  Value value;
  for (Operation &nested : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(nested)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    if (&nested == read) {
      SmallVector<Value> indices;
      for (Value operand : read->getOperands().drop_front())
        indices.push_back(mapping.lookupOrDefault(operand));
      value = width
                  ? vector::LoadOp::create(
                        b, loc, VectorType::get({width}, element),
                        gather.rows.source, indices,
                        /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes))
                        .getResult()
                  : memref::LoadOp::create(b, loc, gather.rows.source, indices)
                        .getResult();
      continue;
    }
    // The select of the element or zero is rebuilt below.
    if (gather.rows.condition && nested.getNumResults() == 1 &&
        nested.getResult(0) == body->getTerminator()->getOperand(0))
      continue;
    b.clone(nested, mapping);
  }
  if (!gather.rows.condition)
    return value;
  Type type = width ? Type(VectorType::get({width}, element)) : element;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  return arith::SelectOp::create(
      b, loc, mapping.lookupOrDefault(gather.rows.condition), value, zero);
}

/// Erases `buffer`, an allocation no op reads or writes any more: its sizes
/// (loop ranges read them) become the allocation's, its deallocation goes.
void eraseAllocation(RewriterBase &rewriter, Value buffer) {
  Operation *allocation = buffer.getDefiningOp();
  auto type = cast<MemRefType>(buffer.getType());
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers())) {
    auto dim = dyn_cast<memref::DimOp>(user);
    std::optional<int64_t> axis = dim ? dim.getConstantIndex() : std::nullopt;
    if (!axis) {
      rewriter.eraseOp(user);
      continue;
    }
    rewriter.setInsertionPoint(dim);
    if (type.isDynamicDim(*axis))
      rewriter.replaceOp(
          dim, allocation->getOperand(type.getDynamicDimIndex(*axis)));
    else
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(
          dim, type.getDimSize(*axis));
  }
  rewriter.eraseOp(allocation);
}

} // namespace

std::optional<TensorCoreStagedGather>
matchTensorCoreStagedGather(linalg::LinalgOp product, OpOperand &input) {
  Value buffer = input.get();
  auto allocation = buffer.getDefiningOp<memref::AllocOp>();
  if (!allocation)
    return std::nullopt;
  linalg::LinalgOp writer;
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user) || &use == &input)
      continue;
    auto linalgUser = dyn_cast<linalg::LinalgOp>(user);
    if (writer || !linalgUser || !linalgUser.isDpsInit(&use))
      return std::nullopt;
    writer = linalgUser;
  }
  if (!writer || writer->getBlock() != product->getBlock() ||
      !writer->isBeforeInBlock(product))
    return std::nullopt;
  std::optional<codegen::RowGather> rows = codegen::matchRowGather(writer);
  if (!rows)
    return std::nullopt;
  SmallVector<Value> reads = {rows->source};
  for (OpOperand *gathered : writer.getDpsInputOperands())
    reads.push_back(gathered->get());
  // Up to where the product runs: its epilogue's consumer, before which its
  // lowering moves it (so the match is the same before the move and after).
  Operation *runsAt = product;
  if (std::optional<TensorCoreEpilogue> epilogue =
          matchTensorCoreEpilogue(product))
    runsAt = epilogue->consumer;
  if (touchedBetween(writer, runsAt, reads, {}))
    return std::nullopt;
  return TensorCoreStagedGather{writer, *rows};
}

bool isStagedGatherBuffer(Value buffer, int64_t threadsPerBlock) {
  return llvm::any_of(buffer.getUses(), [&](OpOperand &use) {
    auto product = dyn_cast<linalg::LinalgOp>(use.getOwner());
    return product && product.isDpsInput(&use) &&
           matchTensorCoreMatmul(product, threadsPerBlock) &&
           matchTensorCoreStagedGather(product, use);
  });
}

std::optional<TensorCoreEpilogue>
matchTensorCoreEpilogue(linalg::LinalgOp product) {
  Value tile = product.getDpsInitOperand(0)->get();
  Operation *allocation = tile.getDefiningOp();
  if (!isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(allocation))
    return std::nullopt;
  Block *block = product->getBlock();
  Operation *start = nullptr;
  Value source;
  linalg::LinalgOp consumer;
  for (Operation *user : tile.getUsers()) {
    if (user == product || isa<memref::DeallocOp>(user))
      continue;
    if (auto dim = dyn_cast<memref::DimOp>(user)) {
      if (!dim.getConstantIndex())
        return std::nullopt;
      continue;
    }
    if (user->getBlock() != block)
      return std::nullopt;
    // What the tile holds before the product: a scalar, or a copy.
    Value copied = copiedInto(user, tile);
    if (copied || fillsWithOneValue(user)) {
      if (start || !user->isBeforeInBlock(product))
        return std::nullopt;
      start = user;
      source = copied;
      continue;
    }
    auto linalgUser = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgUser || consumer || !product->isBeforeInBlock(user))
      return std::nullopt;
    consumer = linalgUser;
  }
  if (!start || !consumer || !consumer.hasPureBufferSemantics() ||
      consumer.getNumLoops() != consumer.getNumParallelLoops())
    return std::nullopt;
  // The tile is one input of the consumer, read through a permutation, so
  // each accumulator is one iteration of it.
  std::optional<unsigned> operand;
  for (OpOperand &use : consumer->getOpOperands()) {
    if (use.get() != tile)
      continue;
    if (operand || consumer.isDpsInit(&use) ||
        !consumer.getMatchingIndexingMap(&use).isPermutation())
      return std::nullopt;
    operand = use.getOperandNumber();
  }
  // The product moves to just before the consumer (whose operands are
  // then all defined before it), so nothing between them may write what it
  // reads; nor anything between the copy and it the copy's source, which
  // the sums then start from.
  SmallVector<Value> read(product.getDpsInputs());
  if (source)
    read.push_back(source);
  if (touchedBetween(product, consumer, read, {}) ||
      (source && touchedBetween(start, product, {source}, {})))
    return std::nullopt;
  // Its results are stored while other tiles of the product may still
  // read its inputs (or the sums' start).
  for (OpOperand &init : consumer.getDpsInitsMutable())
    for (Value input : read)
      if (rootOf(init.get()) == rootOf(input))
        return std::nullopt;
  return TensorCoreEpilogue{start, source, consumer, *operand};
}

std::optional<TensorCoreMatmul> matchTensorCoreMatmul(linalg::LinalgOp op,
                                                      int64_t threadsPerBlock) {
  if (threadsPerBlock <= 0 ||
      threadsPerBlock % (kBlockRowWarps * kWarpSize) != 0)
    return std::nullopt;
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op->hasAttr(kFewRowsAttrName))
    return std::nullopt;
  OpOperand *inputs[2] = {op.getDpsInputOperand(0), op.getDpsInputOperand(1)};
  OpOperand *output = op.getDpsInitOperand(0);
  for (OpOperand *input : inputs) {
    auto type = dyn_cast<ShapedType>(input->get().getType());
    if (!type || type.getRank() == 0 || !type.getElementType().isBF16())
      return std::nullopt;
  }
  if (!getElementTypeOrSelf(output->get().getType()).isF32() ||
      !isProductBody(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands())
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return std::nullopt;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap maps[2] = {op.getMatchingIndexingMap(inputs[0]),
                       op.getMatchingIndexingMap(inputs[1])};
  AffineMap outMap = op.getMatchingIndexingMap(output);
  std::optional<unsigned> k;
  SmallVector<unsigned> only[2];
  for (unsigned d = 0; d < iterators.size(); ++d) {
    bool used[2] = {maps[0].isFunctionOfDim(d), maps[1].isFunctionOfDim(d)};
    if (iterators[d] == utils::IteratorType::reduction) {
      k = d;
      if (!used[0] || !used[1])
        return std::nullopt;
      continue;
    }
    if (!outMap.isFunctionOfDim(d))
      return std::nullopt;
    for (unsigned i = 0; i < 2; ++i)
      if (used[i] && !used[1 - i])
        only[i].push_back(d);
  }
  // A static depth is whole mma steps; a run-time one (attention's block of
  // keys, at most 256) is staged with zeros past its end.
  if (ranges[*k] == 0 ||
      (!ShapedType::isDynamic(ranges[*k]) && ranges[*k] % kMmaDepth != 0))
    return std::nullopt;
  std::optional<unsigned> sides[2] = {widest(only[0], ranges),
                                      widest(only[1], ranges)};
  if (!sides[0] || !sides[1])
    return std::nullopt;
  // The rows are the wider side (a prompt's tokens rather than a weight's
  // outputs); a product with a side narrower than an mma's (a decode
  // step's one row) is a warp reduction's.
  auto atLeast = [&](unsigned d, int64_t size) {
    return ShapedType::isDynamic(ranges[d]) || ranges[d] >= size;
  };
  unsigned lhs = widest({*sides[0], *sides[1]}, ranges) == *sides[0] ? 0 : 1;
  unsigned m = *sides[lhs], n = *sides[1 - lhs];
  if (!atLeast(m, kMmaRows) || !atLeast(n, kMmaColumns))
    return std::nullopt;
  return TensorCoreMatmul{m, n, *k, lhs, 1 - lhs};
}

TensorCoreLayout tensorCoreLayout(linalg::LinalgOp op,
                                  const TensorCoreMatmul &matmul,
                                  int64_t threadsPerBlock) {
  int64_t columnWarps = threadsPerBlock / kWarpSize / kBlockRowWarps;
  TensorCoreLayout wide{columnWarps, 2, 8}, narrow{columnWarps, 1, 4};
  return mayReach(op, matmul.m, wide.rows()) &&
                 mayReach(op, matmul.n, wide.columns())
             ? wide
             : narrow;
}

SmallVector<int64_t> tensorCoreBlockTile(linalg::LinalgOp op,
                                         const TensorCoreMatmul &matmul,
                                         int64_t threadsPerBlock) {
  TensorCoreLayout layout = tensorCoreLayout(op, matmul, threadsPerBlock);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tile(ranges.size(), 1);
  tile[matmul.k] = 0;
  tile[matmul.m] = layout.rows();
  tile[matmul.n] = layout.columns();
  for (unsigned d : {matmul.m, matmul.n})
    if (!ShapedType::isDynamic(ranges[d]))
      tile[d] = std::min(tile[d], ranges[d]);
  return tile;
}

std::array<MemRefType, 2>
tensorCoreStageTypes(MLIRContext *context, ArrayRef<TensorCoreLayout> layouts) {
  auto space =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  Type bf16 = BFloat16Type::get(context);
  int64_t rows = 0, columns = 0;
  for (const TensorCoreLayout &layout : layouts) {
    rows = std::max(rows, layout.rows());
    columns = std::max(columns, layout.columns());
  }
  auto stage = [&](int64_t rows) {
    return MemRefType::get({rows * kStageRowElements}, bf16, AffineMap(),
                           space);
  };
  return {stage(rows), stage(columns)};
}

Value loadStageChunk(
    OpBuilder &b, Location loc, Value whole,
    function_ref<Value(OpBuilder &, Location)> vector,
    function_ref<Value(OpBuilder &, Location, int64_t)> element) {
  auto type = VectorType::get({kStageChunk}, b.getBF16Type());
  return scf::IfOp::create(
             b, loc, whole,
             [&](OpBuilder &then, Location at) {
               scf::YieldOp::create(then, at, vector(then, at));
             },
             [&](OpBuilder &otherwise, Location at) {
               SmallVector<Value> elements;
               for (int64_t e = 0; e < kStageChunk; ++e)
                 elements.push_back(element(otherwise, at, e));
               scf::YieldOp::create(
                   otherwise, at,
                   vector::FromElementsOp::create(otherwise, at, type, elements)
                       .getResult());
             })
      .getResult(0);
}

void storeStageChunk(OpBuilder &b, Location loc, Value elements, Value stage,
                     Value at, Value inStage) {
  auto store = [&] {
    vector::StoreOp::create(b, loc, elements, stage, ValueRange{at},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(kVectorBytes));
  };
  if (!inStage)
    return store();
  scf::IfOp::create(b, loc, inStage, [&](OpBuilder &, Location) {
    store();
    scf::YieldOp::create(b, loc);
  });
}

Value inDefaultMemorySpace(OpBuilder &b, Location loc, Value stage) {
  auto type = cast<MemRefType>(stage.getType());
  return memref::MemorySpaceCastOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), stage);
}

Value bFragmentOf(OpBuilder &b, Location loc, Value matrices, int64_t of) {
  auto type = VectorType::get(
      {2, 2}, cast<VectorType>(matrices.getType()).getElementType());
  Value fragment = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  for (int64_t reg = 0; reg < 2; ++reg)
    fragment = vector::InsertOp::create(
        b, loc,
        vector::ExtractOp::create(b, loc, matrices,
                                  ArrayRef<int64_t>{2 * of + reg}),
        fragment, ArrayRef<int64_t>{reg});
  return fragment;
}

LogicalResult
lowerToTensorCores(RewriterBase &rewriter, linalg::LinalgOp op,
                   const TensorCoreMatmul &matmul, Value thread,
                   int64_t threadsPerBlock, ArrayRef<Value> stages,
                   const std::optional<TensorCoreEpilogue> &epilogue) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  if (epilogue)
    rewriter.moveOpBefore(op, epilogue->consumer);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  IndexBuilder index{b, loc};

  SmallVector<Value> extents;
  for (Range range : op.createLoopRanges(rewriter, loc))
    extents.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value depth = extents[matmul.k];
  Value rows = extents[matmul.m], columns = extents[matmul.n];
  const TensorCoreLayout layout = tensorCoreLayout(op, matmul, threadsPerBlock);
  const int64_t tileRows = layout.rows(), tileColumns = layout.columns();
  // The warp's accumulators: tile t is rows 16 (t / parts), columns
  // 8 (t mod parts) of its tile.
  const int64_t fragments = layout.rowFragments, parts = layout.columnParts;
  const int64_t accumulators = fragments * parts;
  Value warpSize = index.constant(kWarpSize);
  Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value group = arith::DivUIOp::create(b, loc, lane, index.constant(4));
  Value quad = arith::RemUIOp::create(b, loc, lane, index.constant(4));
  // Warp w's tile is row (w mod 4), column (w / 4) of the block tile's.
  Value warpRow = index.mul(
      arith::RemUIOp::create(b, loc, warp, index.constant(kBlockRowWarps)),
      layout.warpRows());
  Value warpColumn = index.mul(
      arith::DivUIOp::create(b, loc, warp, index.constant(kBlockRowWarps)),
      layout.warpColumns());

  OpOperand &lhs = *op.getDpsInputOperand(matmul.lhs);
  OpOperand &rhs = *op.getDpsInputOperand(matmul.rhs);
  OpOperand &out = *op.getDpsInitOperand(0);
  Type f32 = b.getF32Type(), bf16 = b.getBF16Type();

  // The stages as the block's copies write them (in the default memory
  // space, as a kernel's other buffers: NVPTX infers the shared one back);
  // ldmatrix reads `stages` themselves, in the workgroup space it needs.
  Value stage[2] = {inDefaultMemorySpace(b, loc, stages[0]),
                    inDefaultMemorySpace(b, loc, stages[1])};
  // Whether each input is read as 16-byte vectors: contiguous along the
  // depth (known here) and aligned (known at run time).
  constexpr int64_t kChunk = kStageChunk;
  // An input a gather of rows writes is staged from the gather's source
  // (contiguous along the depth where the input is and the source's rows
  // are).
  Value asVectors[2];
  OpOperand *sides[2] = {&lhs, &rhs};
  std::optional<TensorCoreStagedGather> staged[2];
  for (unsigned side = 0; side < 2; ++side) {
    staged[side] = matchTensorCoreStagedGather(op, *sides[side]);
    Value read = staged[side] ? staged[side]->rows.source : sides[side]->get();
    bool contiguous =
        readsContiguously(op, *sides[side], matmul.k) &&
        (!staged[side] || hasUnitLastStride(cast<MemRefType>(read.getType())));
    asVectors[side] =
        contiguous ? alignedForVectors(b, loc, read)
                   : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
  }

  // The block tiles: every other parallel loop's index, then a 64-row and
  // a column index; all of a block's threads run each alike.
  SmallVector<unsigned> others;
  SmallVector<Value> counts;
  for (unsigned d = 0; d < extents.size(); ++d)
    if (d != matmul.m && d != matmul.n && d != matmul.k) {
      others.push_back(d);
      counts.push_back(extents[d]);
    }
  counts.push_back(
      arith::CeilDivUIOp::create(b, loc, rows, index.constant(tileRows)));
  counts.push_back(
      arith::CeilDivUIOp::create(b, loc, columns, index.constant(tileColumns)));
  Value total = index.constant(1);
  for (Value count : counts)
    total = arith::MulIOp::create(b, loc, total, count);
  auto tiles =
      scf::ForOp::create(b, loc, index.constant(0), total, index.constant(1));
  b.setInsertionPointToStart(tiles.getBody());
  ValueRange position =
      affine::AffineDelinearizeIndexOp::create(b, loc, tiles.getInductionVar(),
                                               counts, /*hasOuterBound=*/true)
          .getResults();
  SmallVector<Value> base(extents.size(), index.constant(0));
  for (auto [d, at] : llvm::zip(others, position))
    base[d] = at;
  Value tileFirst[2] = {index.mul(position[others.size()], tileRows),
                        index.mul(position[others.size() + 1], tileColumns)};
  Value sideExtent[2] = {rows, columns};
  unsigned sideLoop[2] = {matmul.m, matmul.n};
  int64_t sideRows[2] = {tileRows, tileColumns};
  Value firstRow = index.add(tileFirst[0], warpRow);
  Value firstColumn = index.add(tileFirst[1], warpColumn);

  // This lane's rows and columns of the accumulators, and whether each
  // lies inside the product.
  SmallVector<std::array<Value, 2>> laneRows(fragments), rowInside(fragments);
  for (int64_t fragment = 0; fragment < fragments; ++fragment)
    for (int64_t half = 0; half < 2; ++half) {
      laneRows[fragment][half] =
          index.add(index.add(firstRow, group),
                    index.constant(kMmaRows * fragment + 8 * half));
      rowInside[fragment][half] = index.below(laneRows[fragment][half], rows);
    }
  SmallVector<std::array<Value, 2>> sumColumns(parts), sumColumnInside(parts);
  for (int64_t part = 0; part < parts; ++part) {
    Value partColumn =
        index.add(firstColumn, index.constant(kMmaColumns * part));
    for (int64_t pair = 0; pair < 2; ++pair) {
      sumColumns[part][pair] = index.add(
          index.add(partColumn, index.mul(quad, 2)), index.constant(pair));
      sumColumnInside[part][pair] =
          index.below(sumColumns[part][pair], columns);
    }
  }
  auto sumsType = VectorType::get({2, 2}, f32);
  auto outIvs = [&](int64_t tile, int64_t half, int64_t pair) {
    SmallVector<Value> ivs = base;
    ivs[matmul.m] = laneRows[tile / parts][half];
    ivs[matmul.n] = sumColumns[tile % parts][pair];
    return ivs;
  };
  auto outInside = [&](int64_t tile, int64_t half, int64_t pair) {
    return index.both(rowInside[tile / parts][half],
                      sumColumnInside[tile % parts][pair]);
  };

  // The accumulators start from the output (its fill, or sums so far).
  SmallVector<Value> sums;
  Value filled;
  if (epilogue && !epilogue->source)
    filled = codegen::materializeUniformValue(
        b, loc, cast<linalg::LinalgOp>(epilogue->start));
  for (int64_t tile = 0; tile < accumulators && filled; ++tile)
    sums.push_back(vector::BroadcastOp::create(b, loc, sumsType, filled));
  // A copy's source has the tile's indices.
  Value start = epilogue ? epilogue->source : out.get();
  for (int64_t tile = 0; tile < accumulators && start; ++tile) {
    SmallVector<Value> elements;
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t pair = 0; pair < 2; ++pair)
        elements.push_back(linnet::loadOrZero(
            b, loc, start,
            indicesAt(b, loc, op.getMatchingIndexingMap(&out),
                      outIvs(tile, half, pair)),
            outInside(tile, half, pair)));
    sums.push_back(vector::FromElementsOp::create(b, loc, sumsType, elements));
  }

  // The chunks this thread copies: chunk c of a side is row c / 4 of its
  // tile, 8 of the depth at 8 (c mod 4), so four lanes read a row's 64
  // bytes; a thread has chunks thread, thread + threads, ...
  auto chunkType = VectorType::get({kChunk}, bf16);
  constexpr int64_t kChunksPerRow = kStageDepth / kChunk;
  struct Chunk {
    unsigned side;
    Value index;
    bool mayBePast; // whether the index may be past the side's chunks
  };
  SmallVector<Chunk> chunks;
  for (unsigned side = 0; side < 2; ++side) {
    int64_t count = sideRows[side] * kChunksPerRow;
    for (int64_t first = 0; first < count; first += threadsPerBlock)
      chunks.push_back({side, index.add(thread, index.constant(first)),
                        first + threadsPerBlock > count});
  }
  auto chunkRow = [&](const Chunk &chunk) -> Value {
    return arith::DivUIOp::create(b, loc, chunk.index,
                                  index.constant(kChunksPerRow));
  };
  auto chunkDepth = [&](const Chunk &chunk) {
    return index.mul(arith::RemUIOp::create(b, loc, chunk.index,
                                            index.constant(kChunksPerRow)),
                     kChunk);
  };
  auto chunkInTile = [&](const Chunk &chunk) {
    return index.below(chunk.index,
                       index.constant(sideRows[chunk.side] * kChunksPerRow));
  };
  // A chunk's elements at depth `step` on: a 16-byte load where it may
  // be one (the whole chunk inside), element by element otherwise, zero
  // past the product's edges (a run-time depth may end inside a chunk).
  auto loadChunk = [&](const Chunk &chunk, Value step) -> Value {
    OpOperand &operand = *sides[chunk.side];
    SmallVector<Value> ivs = base;
    unsigned loop = sideLoop[chunk.side];
    ivs[loop] = index.add(tileFirst[chunk.side], chunkRow(chunk));
    ivs[matmul.k] = index.add(step, chunkDepth(chunk));
    Value rowInside = index.below(ivs[loop], sideExtent[chunk.side]);
    if (chunk.mayBePast)
      rowInside = index.both(rowInside, chunkInTile(chunk));
    Value whole = index.both(
        rowInside,
        index.below(index.add(ivs[matmul.k], index.constant(kChunk - 1)),
                    depth));
    const std::optional<TensorCoreStagedGather> &gather = staged[chunk.side];
    AffineMap map = op.getMatchingIndexingMap(&operand);
    return loadStageChunk(
        b, loc, index.both(whole, asVectors[chunk.side]),
        [&](OpBuilder &, Location at) -> Value {
          if (gather)
            return gatheredElements(b, at, *gather, indicesAt(b, at, map, ivs),
                                    kChunk);
          return vector::LoadOp::create(
              b, at, chunkType, operand.get(), indicesAt(b, at, map, ivs),
              /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
        },
        [&](OpBuilder &, Location at, int64_t e) {
          SmallVector<Value> elementIvs = ivs;
          elementIvs[matmul.k] = index.add(ivs[matmul.k], index.constant(e));
          Value inside =
              index.both(rowInside, index.below(elementIvs[matmul.k], depth));
          if (!gather)
            return loadOrZero(b, at, op, operand, elementIvs, inside);
          return scf::IfOp::create(
                     b, at, inside,
                     [&](OpBuilder &, Location in) {
                       scf::YieldOp::create(
                           b, in,
                           gatheredElements(b, in, *gather,
                                            indicesAt(b, in, map, elementIvs),
                                            0));
                     },
                     [&](OpBuilder &, Location in) {
                       scf::YieldOp::create(
                           b, in,
                           arith::ConstantOp::create(
                               b, in, b.getZeroAttr(b.getBF16Type()))
                               .getResult());
                     })
              .getResult(0);
        });
  };
  auto storeChunk = [&](const Chunk &chunk, Value elements) {
    storeStageChunk(b, loc, elements, stage[chunk.side],
                    index.add(index.mul(chunkRow(chunk), kStageRowElements),
                              chunkDepth(chunk)),
                    chunk.mayBePast ? chunkInTile(chunk) : Value());
  };

  // The first step's chunks are loaded before the loop, each later step's
  // while the tensor cores work on the one before: a step's loads are in
  // flight during the previous step's mma.sync.
  SmallVector<Value> carried = sums;
  for (const Chunk &chunk : chunks)
    carried.push_back(loadChunk(chunk, index.constant(0)));
  auto steps = scf::ForOp::create(b, loc, index.constant(0), depth,
                                  index.constant(kStageDepth), carried);
  b.setInsertionPointToStart(steps.getBody());
  Value step = steps.getInductionVar();
  // The last step's reads of the stages (or the previous tile's, or an
  // earlier op's) are done before they are written again.
  gpu::BarrierOp::create(b, loc);
  for (auto [chunk, elements] :
       llvm::zip(chunks, steps.getRegionIterArgs().drop_front(accumulators)))
    storeChunk(chunk, elements);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> next;
  Value nextStep = index.add(step, index.constant(kStageDepth));
  for (const Chunk &chunk : chunks)
    next.push_back(loadChunk(chunk, nextStep));

  // The fragments from the stages with `ldmatrix`: four 8 x 8 matrices of
  // 16-bit elements a warp, lane l giving the address of row l mod 8 of
  // matrix l / 8, and receiving row l / 4, elements 2 (l mod 4) + {0, 1} of
  // each: the layout of mma.sync's fragments, one instruction for what
  // four 32-bit loads a lane read.
  auto fragmentsType = VectorType::get({4, 2}, bf16);
  auto loadMatrices = [&](unsigned side, Value row, Value at) {
    return nvgpu::LdMatrixOp::create(
        b, loc, fragmentsType, stages[side],
        ValueRange{index.add(index.mul(row, kStageRowElements), at)},
        /*transpose=*/false, /*numTiles=*/4);
  };
  Value laneIn8 = arith::RemUIOp::create(b, loc, lane, index.constant(8));
  Value laneIn16 = arith::RemUIOp::create(b, loc, lane, index.constant(16));
  Value laneHalf = arith::DivUIOp::create(b, loc, lane, index.constant(16));
  Value laneOddEighth = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index.constant(8)),
      index.constant(2));
  SmallVector<Value> current(
      steps.getRegionIterArgs().take_front(accumulators));
  for (int64_t half = 0; half < kStageDepth / kMmaDepth; ++half) {
    Value depth = index.constant(kMmaDepth * half);
    // A of each 16 rows: matrices (rows 0-7, 8-15) x (depths 0-7, 8-15),
    // rows first: lane l gives row l mod 16 at depth 8 (l / 16).
    SmallVector<Value> a;
    for (int64_t fragment = 0; fragment < fragments; ++fragment)
      a.push_back(loadMatrices(
          0,
          index.add(index.add(warpRow, index.constant(kMmaRows * fragment)),
                    laneIn16),
          index.add(depth, index.mul(laneHalf, 8))));
    for (int64_t part = 0; part < parts; part += 2) {
      // B of two parts: matrices (part, depths 0-7), (part, 8-15), (part
      // + 1, 0-7), (part + 1, 8-15): lane l gives column 8 (part + l / 16)
      // + l mod 8 at depth 8 (l / 8 mod 2).
      Value column =
          index.add(index.add(warpColumn, index.constant(kMmaColumns * part)),
                    index.add(index.mul(laneHalf, kMmaColumns), laneIn8));
      Value matrices = loadMatrices(
          1, column, index.add(depth, index.mul(laneOddEighth, 8)));
      for (int64_t of = 0; of < 2; ++of) {
        Value bFragment = bFragmentOf(b, loc, matrices, of);
        for (int64_t fragment = 0; fragment < fragments; ++fragment) {
          Value &sum = current[fragment * parts + part + of];
          sum = nvgpu::MmaSyncOp::create(
              b, loc, a[fragment], bFragment, sum,
              b.getI64ArrayAttr({kMmaRows, kMmaColumns, kMmaDepth}));
        }
      }
    }
  }
  llvm::append_range(current, next);
  scf::YieldOp::create(b, loc, current);

  b.setInsertionPointAfter(steps);
  for (int64_t tile = 0; tile < accumulators; ++tile)
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t pair = 0; pair < 2; ++pair) {
        SmallVector<Value> ivs = outIvs(tile, half, pair);
        Value sum = steps.getResult(tile);
        scf::IfOp::create(
            b, loc, outInside(tile, half, pair),
            [&](OpBuilder &then, Location at) {
              Value element = vector::ExtractOp::create(
                  then, at, sum, ArrayRef<int64_t>{half, pair});
              if (epilogue)
                applyEpilogue(then, at, *epilogue,
                              op.getMatchingIndexingMap(&out), ivs, element);
              else
                memref::StoreOp::create(
                    then, at, element, out.get(),
                    indicesAt(then, at, op.getMatchingIndexingMap(&out), ivs));
              scf::YieldOp::create(then, at);
            });
      }
  // The staged gathers are run no more, and their buffers read no more.
  SmallVector<Value> stagedBuffers;
  for (std::optional<TensorCoreStagedGather> &gather : staged) {
    if (!gather)
      continue;
    stagedBuffers.push_back(gather->op.getDpsInitOperand(0)->get());
    rewriter.eraseOp(gather->op);
  }
  Value tile = out.get();
  if (epilogue) {
    rewriter.eraseOp(epilogue->consumer);
    rewriter.eraseOp(epilogue->start);
  }
  rewriter.eraseOp(op);
  if (epilogue)
    eraseAllocation(rewriter, tile);
  for (Value buffer : stagedBuffers)
    eraseAllocation(rewriter, buffer);
  return success();
}

} // namespace linnet

//===- LinnetTiling.cpp - the tileable linnet ops' TilingInterface --------===//
//
// The special ops (attention, the delta rule, the causal convolution, the
// expert matmul, top-k and rank) are tiled as ops, so that a dispatch region
// holds one tile of a whole special op (every step of its scan or key loop)
// rather than each of the generics it decomposes into: the tile of an op is
// the same op on slices of its operands. A target then lowers each tile as
// it likes (a chain of generics on the CPU today, one kernel on a GPU).
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;
using namespace linnet;

namespace {

/// One tiled axis of an operand: the slice takes `size` elements from
/// `offset` there, and the whole axis elsewhere.
struct AxisTile {
  int64_t axis;
  OpFoldResult offset, size;
};

Value extractTile(OpBuilder &b, Location loc, Value source,
                  ArrayRef<AxisTile> tiles) {
  int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  for (const AxisTile &tile : tiles) {
    offsets[tile.axis] = tile.offset;
    sizes[tile.axis] = tile.size;
  }
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

/// The tiled op: `op` on `operands` with `resultTypes`, and the slices made
/// for it.
TilingResult cloneOnTiles(OpBuilder &b, Operation *op, ValueRange operands,
                          TypeRange resultTypes) {
  Operation *tiled = clone(b, op, resultTypes, operands);
  SmallVector<Operation *> slices;
  for (Value operand : operands)
    if (auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>())
      slices.push_back(slice);
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()), slices};
}

/// A static size where `size` is a constant, else dynamic.
int64_t staticSize(OpFoldResult size) {
  return getConstantIntValue(size).value_or(ShapedType::kDynamic);
}

/// The tiles of the leading axes of an input (all but the last), the loops
/// of top-k and rank, at `offsets` and `sizes` of those loops.
SmallVector<AxisTile> leadingTiles(ArrayRef<OpFoldResult> offsets,
                                   ArrayRef<OpFoldResult> sizes) {
  SmallVector<AxisTile> tiles;
  for (auto [axis, offset] : llvm::enumerate(offsets))
    tiles.push_back({int64_t(axis), offset, sizes[axis]});
  return tiles;
}

/// `type` with its last dimension `last` and element type `element`.
RankedTensorType withLastDim(Type type, int64_t last, Type element) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape.back() = last;
  return RankedTensorType::get(shape, element);
}

SmallVector<Range> domainOf(OpBuilder &b, Location loc,
                            ArrayRef<std::pair<Value, int64_t>> axes) {
  SmallVector<Range> domain;
  for (auto [value, axis] : axes)
    domain.push_back(Range{b.getIndexAttr(0),
                           tensor::getMixedSize(b, loc, value, axis),
                           b.getIndexAttr(1)});
  return domain;
}

/// The loops of top-k and rank: the leading axes of `input`, parallel.
SmallVector<utils::IteratorType> leadingIterators(Value input) {
  return {size_t(cast<RankedTensorType>(input.getType()).getRank() - 1),
          utils::IteratorType::parallel};
}

/// The leading-axis domain of a top-k or rank input.
SmallVector<Range> leadingDomain(OpBuilder &b, Location loc, Value input) {
  SmallVector<std::pair<Value, int64_t>> axes;
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  for (int64_t axis = 0; axis + 1 < rank; ++axis)
    axes.push_back({input, axis});
  return domainOf(b, loc, axes);
}

/// Where a top-k or rank result's tile goes: the loops' tile on the leading
/// axes, all `last` elements of the last axis.
void leadingResultPosition(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                           ArrayRef<OpFoldResult> sizes, OpFoldResult last,
                           SmallVector<OpFoldResult> &resultOffsets,
                           SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultOffsets.push_back(b.getIndexAttr(0));
  resultSizes.assign(sizes.begin(), sizes.end());
  resultSizes.push_back(last);
}

} // namespace

//===----------------------------------------------------------------------===//
// AttentionOp: loops [B, Hq, S]
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> AttentionOp::getLoopIteratorTypes() {
  return {3, utils::IteratorType::parallel};
}

SmallVector<Range> AttentionOp::getIterationDomain(OpBuilder &b) {
  return domainOf(b, getLoc(),
                  {{getQuery(), 0}, {getQuery(), 1}, {getQuery(), 2}});
}

FailureOr<TilingResult>
AttentionOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  auto queryType = cast<RankedTensorType>(getQuery().getType());
  int64_t queryHeads = queryType.getDimSize(1),
          keyHeads = cast<RankedTensorType>(getKey().getType()).getDimSize(1);
  if (ShapedType::isDynamic(queryHeads) || ShapedType::isDynamic(keyHeads))
    return emitOpError("is tiled over query heads only with static head "
                       "counts");
  // A tile of query heads reads whole groups, or a part of one group.
  int64_t group = queryHeads / keyHeads;
  // The tile size is the size's upper bound (a last, partial tile is an
  // affine.min of it and the rest).
  FailureOr<int64_t> size = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, sizes[1], /*stopCondition=*/nullptr,
      /*closedUB=*/true);
  if (failed(size))
    return emitOpError("is tiled over query heads only by a static tile size");
  if (*size % group != 0 && group % *size != 0)
    return emitOpError() << "cannot be tiled by " << *size
                         << " query heads: a tile must divide or be a "
                            "multiple of the group of "
                         << group;
  AffineExpr s0 = b.getAffineSymbolExpr(0), s1 = b.getAffineSymbolExpr(1);
  OpFoldResult keyOffset = affine::makeComposedFoldedAffineApply(
      b, loc, s0.floorDiv(group), {offsets[1]});
  OpFoldResult keySize = affine::makeComposedFoldedAffineApply(
      b, loc, s0.ceilDiv(group), {sizes[1]});

  AxisTile rows{0, offsets[0], sizes[0]};
  AxisTile heads{1, offsets[1], sizes[1]}, queries{2, offsets[2], sizes[2]};
  AxisTile keyTile{1, keyOffset, keySize};
  Value query = extractTile(b, loc, getQuery(), {rows, heads, queries});
  Value key = extractTile(b, loc, getKey(), {rows, keyTile});
  Value value = extractTile(b, loc, getValue(), {rows, keyTile});
  Value offset = extractTile(b, loc, getOffset(), {rows});
  Value lengths;
  if (getLengths())
    lengths = extractTile(b, loc, getLengths(), {rows});
  // A tile of queries from offsets[2] on starts that far after the op's.
  Value start;
  if (!isConstantIntValue(offsets[2], 0) || getStart()) {
    OpFoldResult first = offsets[2];
    if (Value own = getStart())
      first = affine::makeComposedFoldedAffineApply(b, loc, s0 + s1,
                                                    {own, offsets[2]});
    start = getValueOrCreateConstantIndexOp(b, loc, first);
  }
  Value init = extractTile(b, loc, getInit(), {rows, heads, queries});
  auto tiled = AttentionOp::create(b, loc, init.getType(), query, key, value,
                                   offset, getScale(), lengths, start, init);
  tiled->setDiscardableAttrs(getOperation()->getDiscardableAttrDictionary());
  SmallVector<Operation *> slices;
  for (Value operand : tiled->getOperands())
    if (auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>())
      slices.push_back(slice);
  return TilingResult{{tiled}, SmallVector<Value>(tiled->getResults()), slices};
}

LogicalResult AttentionOp::getResultTilePosition(
    OpBuilder &b, unsigned, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets = {offsets[0], offsets[1], offsets[2], b.getIndexAttr(0)};
  resultSizes = {sizes[0], sizes[1], sizes[2],
                 tensor::getMixedSize(b, getLoc(), getInit(), 3)};
  return success();
}

LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &shapes) {
  shapes = {tensor::getMixedSizes(b, getLoc(), getInit())};
  return success();
}

//===----------------------------------------------------------------------===//
// DeltaRuleOp: loops [B, N, V]
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> DeltaRuleOp::getLoopIteratorTypes() {
  return {3, utils::IteratorType::parallel};
}

SmallVector<Range> DeltaRuleOp::getIterationDomain(OpBuilder &b) {
  return domainOf(b, getLoc(),
                  {{getQuery(), 0}, {getQuery(), 2}, {getValue(), 3}});
}

FailureOr<TilingResult>
DeltaRuleOp::getTiledImplementation(OpBuilder &b,
                                    ArrayRef<OpFoldResult> offsets,
                                    ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  AxisTile rows{0, offsets[0], sizes[0]};
  // Heads are axis 2 of the per-token operands, axis 1 of the state; value
  // columns the last axis of both.
  AxisTile heads{2, offsets[1], sizes[1]}, stateHeads{1, offsets[1], sizes[1]};
  AxisTile columns{3, offsets[2], sizes[2]};
  SmallVector<Value> operands = {
      extractTile(b, loc, getQuery(), {rows, heads}),
      extractTile(b, loc, getKey(), {rows, heads}),
      extractTile(b, loc, getValue(), {rows, heads, columns}),
      extractTile(b, loc, getBeta(), {rows, heads}),
      extractTile(b, loc, getGate(), {rows, heads}),
      extractTile(b, loc, getLengths(), {rows}),
      extractTile(b, loc, getOutputInit(), {rows, heads, columns}),
      extractTile(b, loc, getInitial(), {rows, stateHeads, columns})};
  return cloneOnTiles(b, getOperation(), operands,
                      TypeRange{operands[6].getType(), operands[7].getType()});
}

LogicalResult DeltaRuleOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  Location loc = getLoc();
  OpFoldResult zero = b.getIndexAttr(0);
  if (resultNumber == 0) {
    resultOffsets = {offsets[0], zero, offsets[1], offsets[2]};
    resultSizes = {sizes[0], tensor::getMixedSize(b, loc, getQuery(), 1),
                   sizes[1], sizes[2]};
  } else {
    resultOffsets = {offsets[0], offsets[1], zero, offsets[2]};
    resultSizes = {sizes[0], sizes[1],
                   tensor::getMixedSize(b, loc, getInitial(), 2), sizes[2]};
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CausalConvOp: loops [B, C]
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> CausalConvOp::getLoopIteratorTypes() {
  return {2, utils::IteratorType::parallel};
}

SmallVector<Range> CausalConvOp::getIterationDomain(OpBuilder &b) {
  return domainOf(b, getLoc(), {{getInput(), 0}, {getInput(), 2}});
}

FailureOr<TilingResult>
CausalConvOp::getTiledImplementation(OpBuilder &b,
                                     ArrayRef<OpFoldResult> offsets,
                                     ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  AxisTile rows{0, offsets[0], sizes[0]};
  AxisTile channels{2, offsets[1], sizes[1]};
  SmallVector<Value> operands = {
      extractTile(b, loc, getInput(), {rows, channels}),
      extractTile(b, loc, getTaps(), {{0, offsets[1], sizes[1]}}),
      extractTile(b, loc, getHistory(), {rows, channels}),
      extractTile(b, loc, getLengths(), {rows})};
  return cloneOnTiles(b, getOperation(), operands,
                      TypeRange{operands[0].getType(), operands[2].getType()});
}

LogicalResult CausalConvOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  Value whole = resultNumber == 0 ? getInput() : getHistory();
  resultOffsets = {offsets[0], b.getIndexAttr(0), offsets[1]};
  resultSizes = {sizes[0], tensor::getMixedSize(b, getLoc(), whole, 1),
                 sizes[1]};
  return success();
}

LogicalResult
CausalConvOp::reifyResultShapes(OpBuilder &b,
                                ReifiedRankedShapedTypeDims &shapes) {
  Location loc = getLoc();
  shapes = {tensor::getMixedSizes(b, loc, getInput()),
            tensor::getMixedSizes(b, loc, getHistory())};
  return success();
}

//===----------------------------------------------------------------------===//
// ExpertMatmulOp: loops [R, K, Out]
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> ExpertMatmulOp::getLoopIteratorTypes() {
  return {3, utils::IteratorType::parallel};
}

SmallVector<Range> ExpertMatmulOp::getIterationDomain(OpBuilder &b) {
  return domainOf(b, getLoc(),
                  {{getExperts(), 0}, {getExperts(), 1}, {getWeights(), 1}});
}

FailureOr<TilingResult>
ExpertMatmulOp::getTiledImplementation(OpBuilder &b,
                                       ArrayRef<OpFoldResult> offsets,
                                       ArrayRef<OpFoldResult> sizes) {
  Location loc = getLoc();
  AxisTile rows{0, offsets[0], sizes[0]}, slots{1, offsets[1], sizes[1]};
  bool perSlot = getInput().getType().getRank() == 3;
  SmallVector<AxisTile> inputTiles = {rows};
  if (perSlot)
    inputTiles.push_back(slots);
  SmallVector<Value> operands = {
      extractTile(b, loc, getInput(), inputTiles),
      extractTile(b, loc, getWeights(), {{1, offsets[2], sizes[2]}}),
      extractTile(b, loc, getExperts(), {rows, slots})};
  auto resultType = RankedTensorType::get(
      {staticSize(sizes[0]), staticSize(sizes[1]), staticSize(sizes[2])},
      getResult().getType().getElementType());
  return cloneOnTiles(b, getOperation(), operands, TypeRange{resultType});
}

LogicalResult ExpertMatmulOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  resultOffsets.assign(offsets.begin(), offsets.end());
  resultSizes.assign(sizes.begin(), sizes.end());
  return success();
}

/// A tile of the result is the iterations of the same offsets and sizes, so
/// that a consumer's region can compute the slots' products it reads (a
/// decode's expert outputs under the combination that weighs them).
FailureOr<TilingResult>
ExpertMatmulOp::generateResultTileValue(OpBuilder &b, unsigned resultNumber,
                                        ArrayRef<OpFoldResult> offsets,
                                        ArrayRef<OpFoldResult> sizes) {
  return getTiledImplementation(b, offsets, sizes);
}

LogicalResult
ExpertMatmulOp::reifyResultShapes(OpBuilder &b,
                                  ReifiedRankedShapedTypeDims &shapes) {
  Location loc = getLoc();
  shapes = {{tensor::getMixedSize(b, loc, getExperts(), 0),
             tensor::getMixedSize(b, loc, getExperts(), 1),
             tensor::getMixedSize(b, loc, getWeights(), 1)}};
  return success();
}

//===----------------------------------------------------------------------===//
// TopKOp and RankOp: loops over the leading axes
//===----------------------------------------------------------------------===//

SmallVector<utils::IteratorType> TopKOp::getLoopIteratorTypes() {
  return leadingIterators(getInput());
}

SmallVector<Range> TopKOp::getIterationDomain(OpBuilder &b) {
  return leadingDomain(b, getLoc(), getInput());
}

FailureOr<TilingResult>
TopKOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes) {
  Value input =
      extractTile(b, getLoc(), getInput(), leadingTiles(offsets, sizes));
  int64_t k = getK();
  return cloneOnTiles(
      b, getOperation(), ValueRange{input},
      TypeRange{withLastDim(input.getType(), k,
                            getValues().getType().getElementType()),
                withLastDim(input.getType(), k, b.getI32Type())});
}

LogicalResult TopKOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  leadingResultPosition(b, offsets, sizes, b.getIndexAttr(getK()),
                        resultOffsets, resultSizes);
  return success();
}

LogicalResult TopKOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &shapes) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, getLoc(), getInput());
  sizes.back() = b.getIndexAttr(getK());
  shapes = {sizes, sizes};
  return success();
}

SmallVector<utils::IteratorType> RankOp::getLoopIteratorTypes() {
  return leadingIterators(getInput());
}

SmallVector<Range> RankOp::getIterationDomain(OpBuilder &b) {
  return leadingDomain(b, getLoc(), getInput());
}

FailureOr<TilingResult>
RankOp::getTiledImplementation(OpBuilder &b, ArrayRef<OpFoldResult> offsets,
                               ArrayRef<OpFoldResult> sizes) {
  Value input =
      extractTile(b, getLoc(), getInput(), leadingTiles(offsets, sizes));
  auto inputType = cast<RankedTensorType>(input.getType());
  return cloneOnTiles(
      b, getOperation(), ValueRange{input},
      TypeRange{
          withLastDim(inputType, inputType.getShape().back(), b.getI32Type())});
}

LogicalResult RankOp::getResultTilePosition(
    OpBuilder &b, unsigned resultNumber, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, SmallVector<OpFoldResult> &resultOffsets,
    SmallVector<OpFoldResult> &resultSizes) {
  leadingResultPosition(
      b, offsets, sizes,
      tensor::getMixedSize(b, getLoc(), getInput(),
                           getInput().getType().getRank() - 1),
      resultOffsets, resultSizes);
  return success();
}

LogicalResult RankOp::reifyResultShapes(OpBuilder &b,
                                        ReifiedRankedShapedTypeDims &shapes) {
  shapes = {tensor::getMixedSizes(b, getLoc(), getInput())};
  return success();
}

//===- SliceOfView.cpp - a slice of a reshape or slice, of its source -----===//
//
// See SliceOfView.h. Only what a tile needs: unit strides, no rank-reducing
// slice of a reshape, static sizes within the reshaped groups, a
// concatenation's pieces and the slice's part of its axis static.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/SliceOfView.h"
#include "linnet/Codegen/UnitAxes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace linnet::codegen {
namespace {

/// Whether `slice` takes every axis with stride 1 and keeps every axis.
bool isPlainBox(tensor::ExtractSliceOp slice) {
  return slice.getResultType().getRank() == slice.getSourceType().getRank() &&
         llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); });
}

/// sum(offsets[i] * strides[i]), folded where constant.
OpFoldResult linearize(RewriterBase &rewriter, Location loc,
                       ArrayRef<OpFoldResult> offsets,
                       ArrayRef<int64_t> strides) {
  AffineExpr sum = rewriter.getAffineConstantExpr(0);
  for (auto [i, stride] : llvm::enumerate(strides))
    sum = sum + rewriter.getAffineSymbolExpr(i) * stride;
  return affine::makeComposedFoldedAffineApply(
      rewriter, loc, AffineMap::get(0, offsets.size(), sum), offsets);
}

/// A slice of expand_shape's result as expand_shape of a slice of its source.
FailureOr<tensor::ExtractSliceOp> sliceOfExpand(RewriterBase &rewriter,
                                                tensor::ExtractSliceOp slice,
                                                tensor::ExpandShapeOp expand) {
  RankedTensorType expanded = expand.getResultType();
  if (!isPlainBox(slice) || !expanded.hasStaticShape())
    return failure();
  Location loc = slice.getLoc();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> sourceOffsets, sourceSizes;
  for (ReassociationIndices group : expand.getReassociationIndices()) {
    if (group.size() == 1) {
      sourceOffsets.push_back(offsets[group.front()]);
      sourceSizes.push_back(sizes[group.front()]);
      continue;
    }
    // Contiguous: unit axes, the one axis sliced (the first wider), then
    // whole axes.
    SmallVector<int64_t> sliceSizes;
    for (int64_t axis : group) {
      std::optional<int64_t> size = getConstantIntValue(sizes[axis]);
      if (!size)
        return failure();
      sliceSizes.push_back(*size);
    }
    size_t sliced = 0;
    while (sliced + 1 < group.size() && sliceSizes[sliced] == 1)
      ++sliced;
    int64_t inner = 1;
    SmallVector<int64_t> strides(group.size(), 0);
    for (size_t i = group.size(); i-- > 0;) {
      strides[i] = inner;
      if (i > sliced && (sliceSizes[i] != expanded.getDimSize(group[i]) ||
                         !isConstantIntValue(offsets[group[i]], 0)))
        return failure();
      inner *= expanded.getDimSize(group[i]);
    }
    SmallVector<OpFoldResult> groupOffsets;
    for (int64_t axis : group)
      groupOffsets.push_back(offsets[axis]);
    sourceOffsets.push_back(linearize(rewriter, loc, groupOffsets, strides));
    sourceSizes.push_back(
        rewriter.getIndexAttr(sliceSizes[sliced] * strides[sliced]));
  }
  SmallVector<OpFoldResult> ones(sourceOffsets.size(),
                                 rewriter.getIndexAttr(1));
  auto sourceSlice = tensor::ExtractSliceOp::create(
      rewriter, loc, expand.getSrc(), sourceOffsets, sourceSizes, ones);
  Value reshaped = tensor::ExpandShapeOp::create(
      rewriter, loc, slice.getResultType(), sourceSlice,
      expand.getReassociationIndices());
  rewriter.replaceOp(slice, reshaped);
  return sourceSlice;
}

/// A slice of collapse_shape's result as collapse_shape of a slice of its
/// source.
FailureOr<tensor::ExtractSliceOp>
sliceOfCollapse(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                tensor::CollapseShapeOp collapse) {
  RankedTensorType source = collapse.getSrcType();
  if (!isPlainBox(slice))
    return failure();
  Location loc = slice.getLoc();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> sourceOffsets, sourceSizes;
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  for (auto [index, group] :
       llvm::enumerate(collapse.getReassociationIndices())) {
    if (group.size() == 1) {
      sourceOffsets.push_back(offsets[index]);
      sourceSizes.push_back(sizes[index]);
      continue;
    }
    SmallVector<int64_t> extents;
    for (int64_t axis : group)
      extents.push_back(source.getDimSize(axis));
    if (llvm::any_of(extents, ShapedType::isDynamic))
      return failure();
    int64_t whole = 1;
    for (int64_t extent : extents)
      whole *= extent;
    std::optional<int64_t> size = getConstantIntValue(sizes[index]);
    if (size && *size == whole && isConstantIntValue(offsets[index], 0)) {
      for (int64_t extent : extents) {
        sourceOffsets.push_back(zero);
        sourceSizes.push_back(rewriter.getIndexAttr(extent));
      }
      continue;
    }
    if (std::optional<int64_t> carrying =
            indexCarryingAxis(source.getShape(), group)) {
      for (int64_t axis : group) {
        sourceOffsets.push_back(axis == *carrying ? offsets[index] : zero);
        sourceSizes.push_back(axis == *carrying ? sizes[index] : one);
      }
      continue;
    }
    if (!size || *size != 1)
      return failure();
    // One element: its index in each axis of the group.
    AffineExpr flat = rewriter.getAffineSymbolExpr(0);
    int64_t inner = whole;
    for (int64_t extent : extents) {
      inner /= extent;
      sourceOffsets.push_back(affine::makeComposedFoldedAffineApply(
          rewriter, loc, AffineMap::get(0, 1, flat.floorDiv(inner) % extent),
          {offsets[index]}));
      sourceSizes.push_back(one);
    }
  }
  SmallVector<OpFoldResult> ones(sourceOffsets.size(), one);
  auto sourceSlice = tensor::ExtractSliceOp::create(
      rewriter, loc, collapse.getSrc(), sourceOffsets, sourceSizes, ones);
  Value reshaped = tensor::CollapseShapeOp::create(
      rewriter, loc, sourceSlice, collapse.getReassociationIndices());
  if (reshaped.getType() != slice.getResultType()) {
    rewriter.eraseOp(reshaped.getDefiningOp());
    rewriter.eraseOp(sourceSlice);
    return failure();
  }
  rewriter.replaceOp(slice, reshaped);
  return sourceSlice;
}

/// A slice of a slice as one slice of the first one's source.
FailureOr<tensor::ExtractSliceOp> sliceOfSlice(RewriterBase &rewriter,
                                               tensor::ExtractSliceOp slice,
                                               tensor::ExtractSliceOp outer) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  if (failed(affine::mergeOffsetsSizesAndStrides(
          rewriter, slice.getLoc(), outer, slice, outer.getDroppedDims(),
          offsets, sizes, strides)))
    return failure();
  auto merged = tensor::ExtractSliceOp::create(
      rewriter, slice.getLoc(), slice.getResultType(), outer.getSource(),
      offsets, sizes, strides);
  rewriter.replaceOp(slice, merged);
  return merged;
}

/// The least and greatest values `value` takes: a constant's, or those of
/// the induction variable of an scf.forall loop of constant bounds (a
/// region's tile offset).
std::optional<std::pair<int64_t, int64_t>> rangeOf(OpFoldResult value) {
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return std::pair{*constant, *constant};
  auto argument = dyn_cast_if_present<BlockArgument>(dyn_cast<Value>(value));
  auto forall =
      argument ? dyn_cast<scf::ForallOp>(argument.getOwner()->getParentOp())
               : nullptr;
  if (!forall || argument.getArgNumber() >= forall.getRank())
    return std::nullopt;
  unsigned d = argument.getArgNumber();
  std::optional<int64_t> lower =
      getConstantIntValue(forall.getMixedLowerBound()[d]);
  std::optional<int64_t> upper =
      getConstantIntValue(forall.getMixedUpperBound()[d]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[d]);
  if (!lower || !upper || !step || *step <= 0 || *upper <= *lower)
    return std::nullopt;
  return std::pair{*lower, *lower + (*upper - *lower - 1) / *step * *step};
}

/// One piece of a concatenation: `source` inserted at `offset` along the
/// concatenated axis.
struct ConcatPiece {
  Value source;
  int64_t offset, size;
};

/// A slice of a concatenation (pieces inserted into a `tensor.empty`, each
/// a box whole but along one axis, together covering it) as the same
/// concatenation of the slices of the pieces it takes: where it takes the
/// axis within one piece, that piece's slice; where it takes whole pieces,
/// those pieces' slices inserted into a new `tensor.empty` of its type.
LogicalResult sliceOfConcat(RewriterBase &rewriter,
                            tensor::ExtractSliceOp slice,
                            SmallVectorImpl<tensor::ExtractSliceOp> &taken) {
  if (!isPlainBox(slice))
    return failure();
  RankedTensorType type = slice.getSourceType();
  if (!type.hasStaticShape())
    return failure();
  SmallVector<ConcatPiece> pieces;
  std::optional<int64_t> axis;
  Value value = slice.getSource();
  while (auto insert = value.getDefiningOp<tensor::InsertSliceOp>()) {
    if (insert.getSourceType().getRank() != type.getRank() ||
        !llvm::all_of(insert.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return failure();
    std::optional<int64_t> pieceOffset, pieceSize;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      std::optional<int64_t> offset =
          getConstantIntValue(insert.getMixedOffsets()[d]);
      std::optional<int64_t> size =
          getConstantIntValue(insert.getMixedSizes()[d]);
      if (!offset || !size)
        return failure();
      if (*offset == 0 && *size == type.getDimSize(d))
        continue;
      if (axis && *axis != d)
        return failure();
      axis = d;
      pieceOffset = offset;
      pieceSize = size;
    }
    if (!pieceOffset)
      return failure();
    pieces.push_back({insert.getSource(), *pieceOffset, *pieceSize});
    value = insert.getDest();
  }
  if (!value.getDefiningOp<tensor::EmptyOp>() || pieces.empty())
    return failure();
  // Pieces in order along the axis, with neither gap nor overlap.
  llvm::sort(pieces, [](const ConcatPiece &a, const ConcatPiece &b) {
    return a.offset < b.offset;
  });
  int64_t covered = 0;
  for (const ConcatPiece &piece : pieces) {
    if (piece.offset != covered)
      return failure();
    covered += piece.size;
  }
  if (covered != type.getDimSize(*axis))
    return failure();

  std::optional<std::pair<int64_t, int64_t>> range =
      rangeOf(slice.getMixedOffsets()[*axis]);
  std::optional<int64_t> extent =
      getConstantIntValue(slice.getMixedSizes()[*axis]);
  if (!range || !extent)
    return failure();
  Location loc = slice.getLoc();
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> ones(type.getRank(), rewriter.getIndexAttr(1));
  // The slice of `piece` from `from` (along the axis, of the concatenation)
  // of `count` elements.
  auto sliceOf = [&](const ConcatPiece &piece, OpFoldResult from,
                     int64_t count) {
    SmallVector<OpFoldResult> pieceOffsets = offsets, pieceSizes = sizes;
    AffineExpr at = rewriter.getAffineSymbolExpr(0);
    pieceOffsets[*axis] = affine::makeComposedFoldedAffineApply(
        rewriter, loc, AffineMap::get(0, 1, at - piece.offset), {from});
    pieceSizes[*axis] = rewriter.getIndexAttr(count);
    auto pieceSlice = tensor::ExtractSliceOp::create(
        rewriter, loc, piece.source, pieceOffsets, pieceSizes, ones);
    taken.push_back(pieceSlice);
    return pieceSlice;
  };
  for (const ConcatPiece &piece : pieces)
    if (range->first >= piece.offset &&
        range->second + *extent <= piece.offset + piece.size) {
      rewriter.replaceOp(slice, sliceOf(piece, offsets[*axis], *extent));
      return success();
    }
  // Whole pieces: the slice's offset along the axis a constant.
  if (range->first != range->second)
    return failure();
  int64_t first = range->first;
  SmallVector<const ConcatPiece *> whole;
  for (const ConcatPiece &piece : pieces) {
    if (piece.offset + piece.size <= first || piece.offset >= first + *extent)
      continue;
    if (piece.offset < first || piece.offset + piece.size > first + *extent)
      return failure();
    whole.push_back(&piece);
  }
  RankedTensorType resultType = slice.getResultType();
  Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
  SmallVector<OpFoldResult> zeros(type.getRank(), rewriter.getIndexAttr(0));
  for (const ConcatPiece *piece : whole) {
    tensor::ExtractSliceOp pieceSlice =
        sliceOf(*piece, rewriter.getIndexAttr(piece->offset), piece->size);
    SmallVector<OpFoldResult> at = zeros;
    at[*axis] = rewriter.getIndexAttr(piece->offset - first);
    result =
        tensor::InsertSliceOp::create(rewriter, loc, pieceSlice, result, at,
                                      pieceSlice.getMixedSizes(), ones);
  }
  rewriter.replaceOp(slice, result);
  return success();
}

} // namespace

bool isConcatenation(Value value) {
  if (!value.getDefiningOp<tensor::InsertSliceOp>())
    return false;
  while (auto insert = value.getDefiningOp<tensor::InsertSliceOp>())
    value = insert.getDest();
  return value.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

LogicalResult
sliceOfViewSource(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                  SmallVectorImpl<tensor::ExtractSliceOp> &taken) {
  Operation *view = slice.getSource().getDefiningOp();
  rewriter.setInsertionPoint(slice);
  FailureOr<tensor::ExtractSliceOp> one = failure();
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(view))
    one = sliceOfExpand(rewriter, slice, expand);
  else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(view))
    one = sliceOfCollapse(rewriter, slice, collapse);
  else if (auto outer = dyn_cast_or_null<tensor::ExtractSliceOp>(view))
    one = sliceOfSlice(rewriter, slice, outer);
  else if (isa_and_nonnull<tensor::InsertSliceOp>(view))
    return sliceOfConcat(rewriter, slice, taken);
  if (failed(one))
    return failure();
  taken.push_back(*one);
  return success();
}

} // namespace linnet::codegen

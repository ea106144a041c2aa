//===- SliceOfView.cpp - a slice of a reshape or slice, of its source -----===//
//
// See SliceOfView.h. Only what a tile needs: unit strides, no rank-reducing
// slice of a reshape, static sizes within the reshaped groups.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/SliceOfView.h"
#include "linnet/Codegen/UnitAxes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/ViewLikeInterfaceUtils.h"
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

} // namespace

FailureOr<tensor::ExtractSliceOp>
sliceOfViewSource(RewriterBase &rewriter, tensor::ExtractSliceOp slice) {
  Operation *view = slice.getSource().getDefiningOp();
  rewriter.setInsertionPoint(slice);
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(view))
    return sliceOfExpand(rewriter, slice, expand);
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(view))
    return sliceOfCollapse(rewriter, slice, collapse);
  if (auto outer = dyn_cast_or_null<tensor::ExtractSliceOp>(view))
    return sliceOfSlice(rewriter, slice, outer);
  return failure();
}

} // namespace linnet::codegen

//===- SliceOfView.h - a slice of a reshape or slice, taken of its source -===//
//
// A tile a region reads of a reshape (expand_shape, collapse_shape) or of a
// slice computed outside it is often a box of that view's source: a head's
// 128 channels of a convolution's 8192 read as [64, 128], the 4096 features
// of an attention's 16 heads, a head of a rotated key (its rotated quarter
// and the rest, concatenated). Taken of the source instead, the tile
// reaches the op that computes the source, which may then join the region.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_SLICEOFVIEW_H
#define LINNET_CODEGEN_SLICEOFVIEW_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace linnet::codegen {

/// Replaces `slice`, of an expand_shape, a collapse_shape, another
/// extract_slice or a concatenation (isConcatenation), by slices of that
/// view's source (then reshaped as the view was), where the slice is a box
/// of the source: of an expand, each group's slice contiguous (unit axes,
/// then one axis sliced, then whole axes); of a collapse, each group's slice
/// whole, of one wide axis, or one element; of a concatenation, within one
/// piece along its axis or of whole pieces (their slices concatenated
/// again). Offsets may be run-time values; sizes of reshaped groups, and
/// the slice's part of a concatenation's axis, must be static. Appends the
/// new slices to `taken`; failure where nothing changed.
mlir::LogicalResult
sliceOfViewSource(mlir::RewriterBase &rewriter,
                  mlir::tensor::ExtractSliceOp slice,
                  llvm::SmallVectorImpl<mlir::tensor::ExtractSliceOp> &taken);

/// Whether `value` is a concatenation as the lowering leaves one: pieces
/// inserted with `tensor.insert_slice` into a `tensor.empty`.
bool isConcatenation(mlir::Value value);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_SLICEOFVIEW_H

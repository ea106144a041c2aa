//===- SliceOfView.h - a slice of a reshape or slice, taken of its source -===//
//
// A tile a region reads of a reshape (expand_shape, collapse_shape) or of a
// slice computed outside it is often a box of that view's source: a head's
// 128 channels of a convolution's 8192 read as [64, 128], the 4096 features
// of an attention's 16 heads. Taken of the source instead, the tile reaches
// the op that computes the source, which may then join the region.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_SLICEOFVIEW_H
#define LINNET_CODEGEN_SLICEOFVIEW_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace linnet::codegen {

/// Replaces `slice`, of an expand_shape, a collapse_shape or another
/// extract_slice, by a slice of that view's source (then reshaped as the
/// view was), where the slice is a box of the source: of an expand, each
/// group's slice contiguous (unit axes, then one axis sliced, then whole
/// axes); of a collapse, each group's slice whole, of one wide axis, or
/// one element. Offsets may be run-time values; sizes of reshaped groups
/// must be static. Returns the new slice, or failure (nothing changed).
mlir::FailureOr<mlir::tensor::ExtractSliceOp>
sliceOfViewSource(mlir::RewriterBase &rewriter,
                  mlir::tensor::ExtractSliceOp slice);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_SLICEOFVIEW_H

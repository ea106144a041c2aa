//===- ShapeBounds.h - the most a shaped value can hold -------------------===//
//
// A tile's sizes are often run-time values bounded by the tile size (an
// `affine.min` of it and the rest). What a region may keep in a block's
// shared memory, what a kernel may read, comes from those bounds.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_SHAPEBOUNDS_H
#define LINNET_CODEGEN_SHAPEBOUNDS_H

#include "mlir/IR/Value.h"

#include <optional>

namespace linnet::codegen {

/// The most dimension `dim` of the shaped `value` can be: its static size,
/// else its constant upper bound (ValueBoundsConstraintSet); none where it
/// has no constant bound.
std::optional<int64_t> boundedSize(mlir::Value value, int64_t dim);

/// The most elements the shaped `value` (a tensor or a buffer) can hold:
/// each dynamic size at its constant upper bound (ValueBoundsConstraintSet);
/// none where a size has no constant bound.
std::optional<int64_t> boundedElementCount(mlir::Value value);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_SHAPEBOUNDS_H

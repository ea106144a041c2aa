//===- UniformValue.h - the one value an op writes everywhere -------------===//
//
// A fill (`linalg.fill`, or the generic of no inputs a generalized fill is)
// writes one value to every element of its output. Fusion computes its tile
// again in each region that reads it, the tensor-core epilogue starts its
// accumulators from the value, and an element of it is the value itself.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_UNIFORMVALUE_H
#define LINNET_CODEGEN_UNIFORMVALUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace linnet::codegen {

/// The one value `op` (on tensors or buffers) writes to every element of
/// its output `init`: a linalg.fill's, or that of an op of parallel loops
/// alone whose body yields, for that output, a value from outside the op, a
/// scalar input or a constant made in the body (its attribute); none
/// otherwise.
std::optional<mlir::OpFoldResult> uniformValue(mlir::linalg::LinalgOp op,
                                               unsigned init = 0);

/// uniformValue's value as a Value at `builder`'s insertion point (a
/// constant made there for an attribute); none where there is none.
mlir::Value materializeUniformValue(mlir::OpBuilder &builder,
                                    mlir::Location loc,
                                    mlir::linalg::LinalgOp op,
                                    unsigned init = 0);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_UNIFORMVALUE_H

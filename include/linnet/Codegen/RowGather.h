//===- RowGather.h - an op whose rows are rows of a tensor ------*- C++ -*-===//
//
// A prompt's routed experts gather their input rows into sorted order
// before a product reads them on the tensor cores; a block can instead
// stage each row of its tile straight from where the gather reads it. This
// recognizes such a gather, on tensors (dispatch regions take it into the
// product's region whatever its tile's size) and on buffers (the product's
// lowering stages from its source).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_ROWGATHER_H
#define LINNET_CODEGEN_ROWGATHER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace linnet::codegen {

/// A gather of rows: a linalg op of parallel loops only with one output of
/// the identity map, whose inputs' maps leave out its last loop (what a row
/// reads of them is the same along the row), and whose body reads one
/// element of a tensor or buffer from outside it (`tensor.extract`,
/// `memref.load`) at indices of which only the last depends on the last
/// loop, and is that loop's index itself, then yields the element, or
/// zero in its place where a condition independent of the last loop fails.
/// Each row of the output is then a row of `source` (from the read's
/// indices but the last) or zeros.
struct RowGather {
  /// The `tensor.extract` or `memref.load` in the body.
  mlir::Operation *read;
  mlir::Value source;
  /// Where it yields the element (null: always); zero elsewhere.
  mlir::Value condition;
};

std::optional<RowGather> matchRowGather(mlir::linalg::LinalgOp op);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_ROWGATHER_H

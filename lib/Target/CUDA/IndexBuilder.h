//===- IndexBuilder.h - index arithmetic of the hand-built kernels --------===//
//
// The kernels the CUDA target builds op by op (tensor-core products,
// attention) compute their lanes' rows, columns and bounds with the same
// few index ops; one builder makes them, at one location.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_INDEXBUILDER_H
#define LINNET_LIB_TARGET_CUDA_INDEXBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace linnet {

/// Index ops at `loc`, inserted where `b` inserts.
struct IndexBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  mlir::Value constant(int64_t value) const {
    return mlir::arith::ConstantIndexOp::create(b, loc, value);
  }
  mlir::Value add(mlir::Value lhs, mlir::Value rhs) const {
    return mlir::arith::AddIOp::create(b, loc, lhs, rhs);
  }
  mlir::Value mul(mlir::Value lhs, int64_t rhs) const {
    return mlir::arith::MulIOp::create(b, loc, lhs, constant(rhs));
  }
  /// lhs < rhs, both taken as unsigned (indices, never negative).
  mlir::Value below(mlir::Value lhs, mlir::Value rhs) const {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                       lhs, rhs);
  }
  mlir::Value both(mlir::Value lhs, mlir::Value rhs) const {
    return mlir::arith::AndIOp::create(b, loc, lhs, rhs);
  }
};

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_INDEXBUILDER_H

//===- UniformValue.cpp - the one value an op writes everywhere -----------===//

#include "linnet/Codegen/UniformValue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace linnet::codegen {

std::optional<OpFoldResult> uniformValue(linalg::LinalgOp op, unsigned init) {
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
    if (init != 0)
      return std::nullopt;
    return OpFoldResult(fill.value());
  }
  if (init >= unsigned(op.getNumDpsInits()) ||
      op.getNumLoops() != op.getNumParallelLoops() || !op.getBlock())
    return std::nullopt;
  Value yielded = op.getBlock()->getTerminator()->getOperand(init);
  // A scalar input (a generalized fill's value) is a value from outside.
  if (auto argument = dyn_cast<BlockArgument>(yielded);
      argument && argument.getOwner() == op.getBlock() &&
      argument.getArgNumber() < unsigned(op.getNumDpsInputs())) {
    Value input = op.getDpsInputOperand(argument.getArgNumber())->get();
    if (isa<ShapedType>(input.getType()))
      return std::nullopt;
    return OpFoldResult(input);
  }
  if (!op->getRegion(0).isAncestor(yielded.getParentRegion()))
    return OpFoldResult(yielded);
  Attribute constant;
  if (matchPattern(yielded, m_Constant(&constant)))
    return OpFoldResult(constant);
  return std::nullopt;
}

Value materializeUniformValue(OpBuilder &builder, Location loc,
                              linalg::LinalgOp op, unsigned init) {
  std::optional<OpFoldResult> value = uniformValue(op, init);
  if (!value)
    return Value();
  if (auto known = dyn_cast<Value>(*value))
    return known;
  Type type = getElementTypeOrSelf(op.getDpsInitOperand(init)->get());
  return arith::ConstantOp::materialize(builder, cast<Attribute>(*value), type,
                                        loc);
}

} // namespace linnet::codegen

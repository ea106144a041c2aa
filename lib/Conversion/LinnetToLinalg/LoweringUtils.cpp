//===- LoweringUtils.cpp - shared pieces of the linnet lowering -----------===//
//
// Implements the builders of LoweringUtils.h.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {

SmallVector<OpFoldResult> getSizes(OpBuilder &b, Location loc, Value tensor) {
  return tensor::getMixedSizes(b, loc, tensor);
}

Value createEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value createFloat(OpBuilder &b, Location loc, Type type, double value) {
  auto floatType = cast<FloatType>(type);
  APFloat apValue(value);
  bool losesInfo = false;
  apValue.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, apValue));
}

Value fillWith(OpBuilder &b, Location loc, Value destination, double value) {
  Value scalar = createFloat(b, loc, getElementTypeOrSelf(destination), value);
  return linalg::FillOp::create(b, loc, ValueRange{scalar},
                                ValueRange{destination})
      .getResult(0);
}

Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Type elementType, double value) {
  return fillWith(b, loc, createEmpty(b, loc, sizes, elementType), value);
}

Value extendToF32(OpBuilder &b, Location loc, Value scalar) {
  if (scalar.getType().isF32())
    return scalar;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), scalar);
}

Value roundFromF32(OpBuilder &b, Location loc, Value scalar, Type elementType) {
  if (elementType.isF32())
    return scalar;
  return arith::TruncFOp::create(b, loc, elementType, scalar);
}

Value roundTensor(OpBuilder &b, Location loc, Value f32Tensor,
                  Type elementType) {
  if (elementType.isF32())
    return f32Tensor;
  auto type = cast<RankedTensorType>(f32Tensor.getType());
  Value init = createEmpty(b, loc, getSizes(b, loc, f32Tensor), elementType);
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  return createGeneric(b, loc, f32Tensor, init, {identity, identity},
                       iterators(type.getRank()),
                       [&](OpBuilder &nb, Location nloc, ValueRange args) {
                         linalg::YieldOp::create(
                             nb, nloc,
                             roundFromF32(nb, nloc, args[0], elementType));
                       })
      .getResult(0);
}

Value toIndex(OpBuilder &b, Location loc, Value integer) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
}

Value castIfNeeded(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

SmallVector<utils::IteratorType> iterators(unsigned parallel,
                                           unsigned reduction) {
  SmallVector<utils::IteratorType> result(parallel,
                                          utils::IteratorType::parallel);
  result.append(reduction, utils::IteratorType::reduction);
  return result;
}

AffineMap projection(MLIRContext *context, unsigned numLoops,
                     ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> results;
  for (unsigned dim : dims)
    results.push_back(getAffineDimExpr(dim, context));
  return AffineMap::get(numLoops, 0, results, context);
}

linalg::GenericOp
createGeneric(OpBuilder &b, Location loc, ValueRange inputs, ValueRange outputs,
              ArrayRef<AffineMap> maps,
              ArrayRef<utils::IteratorType> iteratorTypes,
              function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(b, loc, outputs.getTypes(), inputs, outputs,
                                   maps, iteratorTypes, body);
}

Value createContraction(OpBuilder &b, Location loc, Value lhs, Value rhs,
                        ArrayRef<OpFoldResult> sizes, ArrayRef<AffineMap> maps,
                        unsigned parallel) {
  Value init = createFilled(b, loc, sizes, b.getF32Type(), 0.0);
  return createGeneric(
             b, loc, ValueRange{lhs, rhs}, init, maps, iterators(parallel, 1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value product = arith::MulFOp::create(
                   nb, nloc, extendToF32(nb, nloc, args[0]),
                   extendToF32(nb, nloc, args[1]));
               linalg::YieldOp::create(nb, nloc,
                                       ValueRange{arith::AddFOp::create(
                                           nb, nloc, args[2], product)});
             })
      .getResult(0);
}

} // namespace linnet::lowering

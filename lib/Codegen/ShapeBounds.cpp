//===- ShapeBounds.cpp - the most a shaped value can hold -----------------===//

#include "linnet/Codegen/ShapeBounds.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace linnet::codegen {

std::optional<int64_t> boundedSize(Value value, int64_t dim) {
  int64_t size = cast<ShapedType>(value.getType()).getDimSize(dim);
  if (!ShapedType::isDynamic(size))
    return size;
  FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::UB, ValueBoundsConstraintSet::Variable(value, dim),
      /*stopCondition=*/nullptr, /*closedUB=*/true);
  if (failed(bound) || *bound < 0)
    return std::nullopt;
  return *bound;
}

std::optional<int64_t> boundedElementCount(Value value) {
  int64_t elements = 1;
  for (int64_t d = 0, rank = cast<ShapedType>(value.getType()).getRank();
       d < rank; ++d) {
    std::optional<int64_t> extent = boundedSize(value, d);
    if (!extent)
      return std::nullopt;
    elements *= *extent;
  }
  return elements;
}

} // namespace linnet::codegen

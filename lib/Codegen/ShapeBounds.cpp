//===- ShapeBounds.cpp - the most a shaped value can hold -----------------===//

#include "linnet/Codegen/ShapeBounds.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace linnet::codegen {

std::optional<int64_t> boundedElementCount(Value value) {
  auto type = cast<ShapedType>(value.getType());
  int64_t elements = 1;
  for (auto [d, size] : llvm::enumerate(type.getShape())) {
    int64_t extent = size;
    if (ShapedType::isDynamic(size)) {
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB,
          ValueBoundsConstraintSet::Variable(value, int64_t(d)),
          /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (failed(bound) || *bound < 0)
        return std::nullopt;
      extent = *bound;
    }
    elements *= extent;
  }
  return elements;
}

} // namespace linnet::codegen

//===- HostBuffers.cpp - which buffers the host's operations share --------===//

#include "HostBuffers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value linnet::viewSourceOf(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(def))
    return cast.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return view.getViewSource();
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return cast.getSource();
  if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
    return metadata.getSource();
  return {};
}

Value linnet::rootOf(Value value) {
  while (Value source = viewSourceOf(value))
    value = source;
  return value;
}

/// Whether `root` is a buffer of its own: an allocation.
static bool isAllocation(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

/// Whether `root` is an argument of its function (not a loop's carried
/// buffer, which may be any buffer).
static bool isFunctionArgument(Value root) {
  auto argument = dyn_cast<BlockArgument>(root);
  return argument && argument.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
}

bool linnet::mayOverlap(Value a, Value b, bool distinctArguments) {
  Value rootA = rootOf(a), rootB = rootOf(b);
  if (rootA != rootB) {
    // A call's or a branch's buffer result may be a view of anything.
    if (isAllocation(rootA) || isAllocation(rootB))
      return !(isAllocation(rootA) || isFunctionArgument(rootA)) ||
             !(isAllocation(rootB) || isFunctionArgument(rootB));
    return !isFunctionArgument(rootA) || !isFunctionArgument(rootB) ||
           !distinctArguments;
  }
  auto viewA = a.getDefiningOp<memref::SubViewOp>();
  auto viewB = b.getDefiningOp<memref::SubViewOp>();
  if (!viewA || !viewB || viewA.getSource() != viewB.getSource())
    return true;
  FailureOr<bool> overlapping = ValueBoundsConstraintSet::areOverlappingSlices(
      a.getContext(), HyperrectangularSlice(viewA),
      HyperrectangularSlice(viewB));
  return failed(overlapping) || *overlapping;
}

int64_t linnet::parameterBytes(Value value) {
  if (auto type = dyn_cast<MemRefType>(value.getType()))
    return 8 * (3 + 2 * type.getRank());
  return 8;
}

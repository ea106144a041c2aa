//===- LaunchParts.cpp - what merged and chained kernels take in ----------===//

#include "LaunchParts.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace linnet {

int64_t SharedWorkgroup::bufferBytes(MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

std::optional<int64_t> workgroupBytes(gpu::LaunchOp launch) {
  int64_t bytes = 0;
  for (BlockArgument buffer : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return std::nullopt;
    bytes += SharedWorkgroup::bufferBytes(type);
  }
  return bytes;
}

SmallVector<Type> workgroupTypes(gpu::LaunchOp launch) {
  return llvm::map_to_vector(
      launch.getWorkgroupAttributions(),
      [](BlockArgument buffer) { return buffer.getType(); });
}

SmallVector<unsigned> SharedWorkgroup::place(ArrayRef<Type> part) {
  SmallVector<unsigned> indices;
  llvm::SmallDenseSet<unsigned> taken;
  for (Type type : part) {
    unsigned index = 0;
    while (index < types.size() &&
           (types[index] != type || taken.contains(index)))
      ++index;
    if (index == types.size())
      types.push_back(type);
    taken.insert(index);
    indices.push_back(index);
  }
  return indices;
}

int64_t SharedWorkgroup::bytes() const {
  int64_t total = 0;
  for (Type type : types)
    total += bufferBytes(cast<MemRefType>(type));
  return total;
}

bool isMergeable(gpu::LaunchOp launch) {
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  return launch.getBody().hasOneBlock() && !launch.getAsyncToken() &&
         launch.getAsyncDependencies().empty() &&
         !launch.getDynamicSharedMemorySize() && !launch.hasClusterSize() &&
         launch.getNumPrivateAttributions() == 0 &&
         launch.getFunction().has_value() && workgroupBytes(launch) &&
         getConstantIntValue(block.x) && isConstantIntValue(grid.y, 1) &&
         isConstantIntValue(grid.z, 1) && isConstantIntValue(block.y, 1) &&
         isConstantIntValue(block.z, 1);
}

llvm::SetVector<Value> parametersOf(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  llvm::SetVector<Value> parameters;
  for (Value value : used)
    if (!matchPattern(value, m_Constant()))
      parameters.insert(value);
  return parameters;
}

void clonePartBody(RewriterBase &rewriter, gpu::LaunchOp part,
                   gpu::LaunchOp into, Value blockId, Value blocks,
                   ValueRange workgroup) {
  IRMapping mapping;
  gpu::KernelDim3 partIds = part.getBlockIds(), ids = into.getBlockIds();
  gpu::KernelDim3 partGrid = part.getGridSize(), grid = into.getGridSize();
  mapping.map(partIds.x, blockId);
  mapping.map(partIds.y, ids.y);
  mapping.map(partIds.z, ids.z);
  mapping.map(partGrid.x, blocks);
  mapping.map(partGrid.y, grid.y);
  mapping.map(partGrid.z, grid.z);
  for (auto [from, to] : {std::pair{part.getThreadIds(), into.getThreadIds()},
                          {part.getBlockSize(), into.getBlockSize()}}) {
    mapping.map(from.x, to.x);
    mapping.map(from.y, to.y);
    mapping.map(from.z, to.z);
  }
  for (auto [buffer, value] :
       llvm::zip_equal(part.getWorkgroupAttributions(), workgroup))
    mapping.map(buffer, value);
  for (Operation &op : part.getBody().front().without_terminator())
    rewriter.clone(op, mapping);
}

bool letsLaunchesPass(Operation &op) {
  if (op.getNumRegions() != 0)
    return false;
  return isMemoryEffectFree(&op) || isa<memref::AllocOp, memref::DeallocOp>(op);
}

} // namespace linnet

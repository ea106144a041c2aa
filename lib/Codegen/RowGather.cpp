//===- RowGather.cpp - an op whose rows are rows of a tensor --------------===//
//
// See RowGather.h.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/RowGather.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace linnet::codegen {
namespace {

/// Whether `value` depends, inside `body`, on the index of loop `loop` or on
/// the result of `avoid`.
bool dependsOn(Value value, Block *body, unsigned loop,
               Operation *avoid = nullptr) {
  SmallVector<Value> worklist = {value};
  llvm::SmallPtrSet<Operation *, 8> visited;
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    Operation *def = next.getDefiningOp();
    if (!def || def->getBlock() != body || !visited.insert(def).second)
      continue;
    if (def == avoid)
      return true;
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      if (index.getDim() == loop)
        return true;
    llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

} // namespace

std::optional<RowGather> matchRowGather(linalg::LinalgOp op) {
  unsigned loops = op.getNumLoops();
  if (loops < 2 || op.getNumParallelLoops() != loops ||
      op.getNumDpsInits() != 1 || !op.getRegionOutputArgs().front().use_empty())
    return std::nullopt;
  unsigned last = loops - 1;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(last))
      return std::nullopt;

  Block *body = op.getBlock();
  RowGather gather{};
  for (Operation &nested : body->without_terminator()) {
    Value source;
    ValueRange indices;
    if (auto extract = dyn_cast<tensor::ExtractOp>(nested)) {
      source = extract.getTensor();
      indices = extract.getIndices();
    } else if (auto load = dyn_cast<memref::LoadOp>(nested)) {
      source = load.getMemRef();
      indices = load.getIndices();
    } else if (isMemoryEffectFree(&nested)) {
      continue;
    } else {
      return std::nullopt;
    }
    // One read, of a value from outside, along the last loop only by its
    // last index, which is that loop's index.
    if (gather.read || indices.empty() ||
        op->isAncestor(source.getParentRegion()->getParentOp()))
      return std::nullopt; // a second read, or one of a value of the body

    auto index = indices.back().getDefiningOp<linalg::IndexOp>();
    if (!index || index.getDim() != last)
      return std::nullopt;
    for (Value other : indices.drop_back())
      if (dependsOn(other, body, last))
        return std::nullopt;
    gather.read = &nested;
    gather.source = source;
  }
  if (!gather.read)
    return std::nullopt;

  // The yield: the element, or select(condition, element, zero), nothing
  // else reading either.
  Value yielded = body->getTerminator()->getOperand(0);
  Value element = gather.read->getResult(0);
  if (!element.hasOneUse() || !yielded.hasOneUse())
    return std::nullopt;
  if (yielded == element)
    return gather;
  auto select = yielded.getDefiningOp<arith::SelectOp>();
  if (!select || select.getTrueValue() != element ||
      !matchPattern(select.getFalseValue(), m_AnyZeroFloat()) ||
      dependsOn(select.getCondition(), body, last, gather.read))
    return std::nullopt;
  gather.condition = select.getCondition();
  return gather;
}

} // namespace linnet::codegen

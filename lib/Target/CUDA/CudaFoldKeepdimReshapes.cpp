//===- CudaFoldKeepdimReshapes.cpp - a kept axis inside its reader --------===//
//
// A reduction that keeps its reduced axis (a norm's mean, a softmax's max
// and sum: `sum(x, axis = -1, keepdim = true)`) is a reduction to [R] and a
// `tensor.expand_shape` to [R, 1]; the reshape stands between the reduction
// and the elementwise op that reads it, and a dispatch region's fusion does
// not pass it, so each such reduction would be a kernel of its own.
//
// A reshape that only adds or drops axes of size 1 is folded into each
// linalg.generic reading it instead: the reader reads the reshape's source,
// an axis of size 1 at index 0, so producer and reader stand adjacent and
// the reader's region takes the producer. What is left (a reshape some
// other op reads) is folded into the reduction that produced it (linalg's
// fold-reshape-by-expansion, the unit axis a loop of the reduction), which
// moves the reshape onto the reduction's input, where it stops that
// input's producer from joining the region.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "linnet/Codegen/UnitAxes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAFOLDKEEPDIMRESHAPES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::codegen::indexCarryingAxis;

namespace {

/// Whether `operand` is an expand_shape's source that a linalg op with
/// reduction loops produces: the reshape of a kept axis, and only that.
bool isKeptAxisReshape(OpOperand *operand) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(operand->getOwner());
  if (!expand)
    return false;
  auto producer = expand.getSrc().getDefiningOp<linalg::LinalgOp>();
  return producer && producer.getNumReductionLoops() > 0;
}

/// The indexing map through which a reader of `reshape`'s result, read
/// through `map`, reads its source instead, where the reshape only adds or
/// drops axes of size 1 (each group of its reassociation at most one axis
/// not statically 1): an axis of size 1 beside a wider one is read at 0,
/// the wider one as before. None for any other reshape.
std::optional<AffineMap> readThroughUnitReshape(Operation *reshape,
                                                AffineMap map) {
  MLIRContext *context = map.getContext();
  AffineExpr zero = getAffineConstantExpr(0, context);
  SmallVector<AffineExpr> results;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
    ArrayRef<int64_t> expanded = expand.getResultType().getShape();
    for (const ReassociationIndices &group : expand.getReassociationIndices()) {
      // A group of units keeps its first axis's expression (0 wherever the
      // reader is in bounds): a map of constants alone would not be tiled,
      // and its producer would not join the reader's region.
      std::optional<int64_t> carrying = indexCarryingAxis(expanded, group);
      if (!carrying)
        return std::nullopt;
      results.push_back(map.getResult(*carrying));
    }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
    ArrayRef<int64_t> source = collapse.getSrcType().getShape();
    for (auto [index, group] :
         llvm::enumerate(collapse.getReassociationIndices())) {
      std::optional<int64_t> carrying = indexCarryingAxis(source, group);
      if (!carrying)
        return std::nullopt;
      bool allUnit = source[*carrying] == 1;
      // The group's one wide axis takes the reader's expression, the
      // others are read at 0; a group of units takes it on every axis (it
      // is 0 wherever the reader is in bounds).
      for (int64_t axis : group)
        results.push_back(allUnit || axis == *carrying ? map.getResult(index)
                                                       : zero);
    }
  } else {
    return std::nullopt;
  }
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        context);
}

/// A linalg.generic reading, as an input, a reshape that only adds or drops
/// unit axes reads the reshape's source.
struct ReadThroughUnitReshape : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    bool changed = false;
    for (OpOperand *operand : op.getDpsInputOperands()) {
      Operation *reshape = operand->get().getDefiningOp();
      if (!reshape ||
          !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape))
        continue;
      int64_t index = operand->getOperandNumber();
      std::optional<AffineMap> map =
          readThroughUnitReshape(reshape, maps[index]);
      if (!map)
        continue;
      maps[index] = *map;
      inputs[index] = reshape->getOperand(0);
      changed = true;
    }
    if (!changed)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputsMutable().assign(inputs);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct CudaFoldKeepdimReshapesPass
    : linnet::impl::LinnetCudaFoldKeepdimReshapesBase<
          CudaFoldKeepdimReshapesPass> {
  void runOnOperation() override {
    RewritePatternSet readers(&getContext());
    readers.add<ReadThroughUnitReshape>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(readers))))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      isKeptAxisReshape);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

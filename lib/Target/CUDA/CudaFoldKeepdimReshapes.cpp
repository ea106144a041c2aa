//===- CudaFoldKeepdimReshapes.cpp - a kept axis inside its reduction -----===//
//
// A reduction that keeps its reduced axis (a norm's mean, a softmax's max
// and sum: `sum(x, axis = -1, keepdim = true)`) is a reduction to [R] and a
// `tensor.expand_shape` to [R, 1]; the reshape stands between the reduction
// and the elementwise op that reads it, and a dispatch region's fusion does
// not pass it, so each such reduction is a kernel of its own. Folding the
// reshape into the reduction (linalg's fold-reshape-by-expansion: the
// reduction gets the unit axis as a loop of its own) leaves the two
// adjacent, and the region of the reader takes the reduction.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAFOLDKEEPDIMRESHAPES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

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

struct CudaFoldKeepdimReshapesPass
    : linnet::impl::LinnetCudaFoldKeepdimReshapesBase<
          CudaFoldKeepdimReshapesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      isKeptAxisReshape);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

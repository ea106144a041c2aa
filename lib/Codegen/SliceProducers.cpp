//===- SliceProducers.cpp - a gather's slices as ops of their own ---------===//
//
// A split (`tensor.extract_slice` of each part) stands between an op and
// the ops that read its parts, and dispatch regions fuse a producer only
// where a region reads the op itself: a prompt's routed gate and up
// product, gathered back into slot order and split into halves, stayed a
// kernel writing 128 MiB a layer at 8k tokens that the SiLU product read
// again. Where every reader of a gather takes a slice, each slice is
// computed by an op of its own, the op's tile for it (its TilingInterface,
// as fusion computes a producer's tile), so no element is computed twice
// unless two slices overlap, and the readers read ops.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"

#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Iterators.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENSLICEPRODUCERS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Whether `op` is one to slice: a gather (a linalg op on tensors of
/// parallel loops only, one result, whose body extracts elements of a
/// tensor), every user of which is a slice of it in its own block (a slice
/// inside a region, a dispatch region's tile, is fusion's). Other ops keep
/// their slices, which regions read through where they may: a causal
/// convolution's q, k and v, sliced, would each be a kernel.
bool isSlicedProducer(linalg::LinalgOp op) {
  bool gathers = !op.getBlock()->getOps<tensor::ExtractOp>().empty();
  return gathers && op.hasPureTensorSemantics() && op->getNumResults() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() && !op->use_empty() &&
         llvm::all_of(op->getUsers(), [&](Operation *user) {
           return isa<tensor::ExtractSliceOp>(user) &&
                  user->getBlock() == op->getBlock();
         });
}

/// Replaces each slice of `op` by the op's tile for it.
void sliceProducer(RewriterBase &rewriter, linalg::LinalgOp op) {
  OpResult result = op->getResult(0);
  for (Operation *user : llvm::to_vector(op->getUsers())) {
    auto slice = cast<tensor::ExtractSliceOp>(user);
    rewriter.setInsertionPoint(slice);
    FailureOr<TilingResult> tile =
        tensor::replaceExtractSliceWithTiledProducer(rewriter, slice, result);
    if (failed(tile) || tile->tiledValues.size() != 1)
      continue;
    Value value = tile->tiledValues.front();
    if (value.getType() != slice.getType())
      value = tensor::CastOp::create(rewriter, slice.getLoc(), slice.getType(),
                                     value);
    rewriter.replaceOp(slice, value);
  }
  if (op->use_empty())
    rewriter.eraseOp(op);
}

struct SliceProducersPass
    : linnet::impl::LinnetCodegenSliceProducersBase<SliceProducersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Readers first: a slice of a sliced op's tile may be sliced in turn.
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk<WalkOrder::PostOrder, ReverseIterator>(
        [&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops)
      if (isSlicedProducer(op))
        sliceProducer(rewriter, op);
  }
};

} // namespace

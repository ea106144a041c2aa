//===- Prepare.cpp - fusion and named contractions before tiling ----------===//
//
// Puts a function's linalg ops in the form dispatch-region formation
// expects: elementwise producers fused into their consumers without
// recomputation, transposes read in place, contractions as named ops, an
// element of a uniform tensor (a constant fill) the value itself, a reshape
// of static shapes to a constant shape views.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/LoweringConfig.h"
#include "linnet/Codegen/Passes.h"
#include "linnet/Codegen/UniformValue.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>
#include <numeric>

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENPREPARE
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::codegen::isContraction;

namespace {

/// Whether `op` only moves data: a generic whose body yields one of its
/// inputs unchanged (a transpose, a broadcast, a copy).
bool isDataMovement(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      generic.getNumDpsInputs() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 &&
         yield.getOperand(0) == generic.getBody()->getArgument(0);
}

/// Whether `op` computes its elements from the loop indices alone: a
/// parallel generic that reads no memory, its inputs (if any) results of
/// such generics or reshapes of them (a router's "lower id" mask, `arange(E) <
/// arange(E)` of E x E booleans). Fused into a consumer it costs a few
/// arithmetic ops there, where materialized it is a buffer the consumer reads.
bool isIndexComputation(Operation *op, int depth = 0) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || depth > 4 || generic.getNumReductionLoops() != 0 ||
      generic->getNumResults() != 1 || !generic.hasPureTensorSemantics())
    return false;
  bool readsMemory = false;
  generic.getBody()->walk(
      [&](Operation *nested) { readsMemory |= !isMemoryEffectFree(nested); });
  if (readsMemory)
    return false;
  return llvm::all_of(generic.getDpsInputs(), [&](Value input) {
    // Through reshapes (`reshape(arange(E), [1, E, 1])`).
    while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
        input.getDefiningOp()))
      input = input.getDefiningOp()->getOperand(0);
    Operation *producer = input.getDefiningOp();
    return producer && isIndexComputation(producer, depth + 1);
  });
}

/// A `tensor.reshape` to a constant shape of a tensor of static shape (a
/// block function inlined where its rows are known: `reshape(y, [B, S, H])`)
/// is a collapse to one axis and an expansion to the shape: views, where a
/// reshape by a shape tensor would read the shape from memory (on a GPU,
/// after a wait for the device).
struct StaticReshape : OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    DenseIntElementsAttr shape;
    if (!matchPattern(op.getShape(), m_Constant(&shape)))
      return failure();
    Value source = op.getSource();
    if (auto cast = source.getDefiningOp<tensor::CastOp>())
      source = cast.getSource();
    auto sourceType = cast<RankedTensorType>(source.getType());
    if (!sourceType.hasStaticShape() || sourceType.getRank() == 0)
      return failure();
    SmallVector<int64_t> sizes;
    for (const APInt &size : shape.getValues<APInt>())
      sizes.push_back(size.getSExtValue());
    if (sizes.empty() || llvm::any_of(sizes, [](int64_t s) { return s < 0; }) ||
        std::accumulate(sizes.begin(), sizes.end(), int64_t(1),
                        std::multiplies<int64_t>()) !=
            sourceType.getNumElements())
      return failure();
    Location loc = op.getLoc();
    auto whole = [](int64_t rank) {
      ReassociationIndices all(rank);
      std::iota(all.begin(), all.end(), 0);
      return SmallVector<ReassociationIndices>{all};
    };
    Value flat = source;
    if (sourceType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(rewriter, loc, source,
                                             whole(sourceType.getRank()));
    Value reshaped = flat;
    auto target = RankedTensorType::get(sizes, sourceType.getElementType());
    if (sizes.size() != 1)
      reshaped = tensor::ExpandShapeOp::create(rewriter, loc, target, flat,
                                               whole(sizes.size()));
    if (reshaped.getType() != op.getType())
      reshaped = tensor::CastOp::create(rewriter, loc, op.getType(), reshaped);
    rewriter.replaceOp(op, reshaped);
    return success();
  }
};

/// Makes a generic contraction a named op (linalg.matmul, ...) where that
/// keeps its indexing maps. MLIR 22's specialization turns a matmul that
/// reads its right operand transposed into a plain linalg.matmul, dropping
/// the transpose: a specialization that changes the maps is discarded.
void specializeContraction(RewriterBase &rewriter, linalg::GenericOp generic) {
  rewriter.setInsertionPoint(generic);
  auto trial = cast<linalg::GenericOp>(rewriter.clone(*generic));
  FailureOr<linalg::LinalgOp> named =
      linalg::specializeGenericOp(rewriter, trial);
  if (failed(named)) {
    rewriter.eraseOp(trial);
    return;
  }
  if (named->getIndexingMapsArray() != generic.getIndexingMapsArray()) {
    rewriter.eraseOp(*named);
    return;
  }
  rewriter.replaceOp(generic, named->getOperation()->getResults());
}

/// An element of a tensor every element of which is one value: a fill's,
/// or a generic's of parallel loops whose body yields a value from outside
/// or a scalar input (`x / sqrt(Dk)` with the divisor a 0-d tensor filled
/// with a constant).
/// The value itself: on a GPU the tensor would be a kernel and the element
/// a host read of device memory, after a wait for the device.
struct ExtractOfUniformTensor : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(extract.getTensor());
    auto op = result ? dyn_cast<linalg::LinalgOp>(result.getOwner())
                     : linalg::LinalgOp();
    if (!op)
      return failure();
    Value value = linnet::codegen::materializeUniformValue(
        rewriter, extract.getLoc(), op, result.getResultNumber());
    if (!value)
      return failure();
    rewriter.replaceOp(extract, value);
    return success();
  }
};

/// Puts the operations in the form the rest of the pass expects: elementwise
/// producers fused into their single consumer, then contractions as named
/// ops (they vectorize straight to `vector.contract`, masks included), and
/// everything else as `linalg.generic`.
LogicalResult prepareOps(func::FuncOp func, RewriterBase &rewriter) {
  // Everything generic first, so that a transpose fuses into the matmul
  // that reads it (its indexing map then reads the weight in place).
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    if (!isa<linalg::GenericOp>(op.getOperation()))
      (void)linalg::generalizeNamedOp(rewriter, op);
  }
  // A producer is fused where its consumer reads each of its elements once,
  // or where it only moves data. Through a broadcasting or reducing map a
  // computing producer (a SiLU feeding the down projection of an expert)
  // would be recomputed for every element of the loops the map leaves out.
  // One computed from the loop indices alone is fused into every consumer.
  RewritePatternSet patterns(func.getContext());
  linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *fused) {
    Operation *producer = fused->get().getDefiningOp();
    auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
    if (!producer || !consumer)
      return false;
    if (isIndexComputation(producer))
      return true;
    return producer->hasOneUse() &&
           (consumer.getMatchingIndexingMap(fused).isPermutation() ||
            isDataMovement(producer));
  });
  patterns.add<ExtractOfUniformTensor, StaticReshape>(func.getContext());
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  for (linalg::GenericOp generic : generics)
    if (isContraction(generic))
      specializeContraction(rewriter, generic);
  return success();
}

struct PreparePass : linnet::impl::LinnetCodegenPrepareBase<PreparePass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    if (failed(prepareOps(getOperation(), rewriter)))
      signalPassFailure();
  }
};

} // namespace

//===- ParallelScatters.cpp - a loop of disjoint inserts as an scf.forall -===//
//
// A write through index tensors (`cache_k[arange(Batch), :, positions, :] =
// k`: each row's key at its own position) is generated as an scf.for over
// the indices, one tensor.insert_slice each, in order, since two indices may
// name the same place. Where one of them is the loop's own index (an
// `arange`, read back as the index), with one element along its axis, the
// places differ from one iteration to the next: the loop becomes an
// scf.forall whose iterations copy their slices (linalg.copy) in parallel,
// one dispatch region: on a GPU one launch for all the rows, where the loop
// was a launch a row on the host.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENPARALLELSCATTERS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Whether `value` is a 1-D `arange`: a generic of no inputs whose element
/// is its index, cast to an integer.
bool isIota(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic.getNumLoops() != 1 || generic->getNumResults() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto cast = yield.getOperand(0).getDefiningOp<arith::IndexCastOp>();
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  return index && index.getDim() == 0;
}

/// index_cast(extract(arange, i)) to an index is i (for the indices below
/// 2^31 an i32 arange holds).
struct ReadIotaAsIndex : OpRewritePattern<arith::IndexCastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::IndexCastOp op,
                                PatternRewriter &rewriter) const override {
    auto extract = op.getIn().getDefiningOp<tensor::ExtractOp>();
    if (!op.getType().isIndex() || !extract || !isIota(extract.getTensor()))
      return failure();
    rewriter.replaceOp(op, extract.getIndices().front());
    return success();
  }
};

/// The scf.for described in the file comment: one tensor carried, the body
/// free of memory effects but for its last op, an insert_slice into the
/// carried tensor (its only use) at the loop's index along an axis of one
/// element.
struct DisjointInsertsToForall : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    if (loop.getNumRegionIterArgs() != 1 ||
        !isa<RankedTensorType>(loop.getResult(0).getType()))
      return failure();
    Block *body = loop.getBody();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    auto insert = yield.getOperand(0).getDefiningOp<tensor::InsertSliceOp>();
    BlockArgument carried = loop.getRegionIterArg(0);
    if (!insert || insert->getBlock() != body || insert.getDest() != carried ||
        !carried.hasOneUse())
      return failure();
    Value iv = loop.getInductionVar();
    bool disjoint = false;
    for (auto [offset, size] :
         llvm::zip_equal(insert.getMixedOffsets(), insert.getMixedSizes()))
      disjoint |= dyn_cast<Value>(offset) == iv && isOneInteger(size);
    if (!disjoint)
      return failure();
    for (Operation &op : body->without_terminator())
      if (&op != insert.getOperation() && !isMemoryEffectFree(&op))
        return failure();

    Location loc = loop.getLoc();
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{getAsOpFoldResult(loop.getLowerBound())},
        ArrayRef<OpFoldResult>{getAsOpFoldResult(loop.getUpperBound())},
        ArrayRef<OpFoldResult>{getAsOpFoldResult(loop.getStep())},
        ValueRange{loop.getInitArgs()[0]}, std::nullopt);
    IRMapping mapping;
    mapping.map(iv, forall.getInductionVar(0));
    mapping.map(carried, forall.getRegionIterArgs()[0]);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(forall.getBody());
      for (Operation &op : body->without_terminator())
        if (&op != insert.getOperation())
          rewriter.clone(op, mapping);
      auto mapped = [&](ArrayRef<OpFoldResult> values) {
        return llvm::map_to_vector(values, [&](OpFoldResult value) {
          if (auto v = dyn_cast<Value>(value))
            return OpFoldResult(mapping.lookupOrDefault(v));
          return value;
        });
      };
      SmallVector<OpFoldResult> offsets = mapped(insert.getMixedOffsets()),
                                sizes = mapped(insert.getMixedSizes()),
                                strides = mapped(insert.getMixedStrides());
      Value source = mapping.lookupOrDefault(insert.getSource());
      // The place, copied into by a linalg op (a region's threads share it).
      Value place = tensor::ExtractSliceOp::create(
          rewriter, loc, insert.getSourceType(), forall.getRegionIterArgs()[0],
          offsets, sizes, strides);
      Value copied =
          linalg::CopyOp::create(rewriter, loc, source, place).getResult(0);
      rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
      tensor::ParallelInsertSliceOp::create(rewriter, loc, copied,
                                            forall.getRegionIterArgs()[0],
                                            offsets, sizes, strides);
    }
    rewriter.replaceOp(loop, forall.getResults());
    return success();
  }
};

struct ParallelScattersPass
    : linnet::impl::LinnetCodegenParallelScattersBase<ParallelScattersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReadIotaAsIndex, DisjointInsertsToForall>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

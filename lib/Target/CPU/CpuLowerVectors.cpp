//===- CpuLowerVectors.cpp - vector code on memrefs down to 1-D vectors ---===//
//
// After bufferization the vectorized tiles still hold n-D, masked vector ops
// (`vector.contract`, `vector.multi_reduction`, n-D transfers). This pass
// hoists each contraction's accumulator out of its reduction loop, then
// lowers everything to the 1-D vector ops that convert-vector-to-llvm maps
// one to one onto LLVM vectors (a contraction becomes broadcasts and FMAs).
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPULOWERVECTORS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// `memref.copy` between strided memrefs lowers to a call into the MLIR C
/// runner library; as `linalg.copy` it becomes a plain loop nest instead.
struct StridedCopyToLinalgCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    if (source.getLayout().isIdentity() && target.getLayout().isIdentity())
      return failure();
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }
};

struct CpuLowerVectorsPass
    : linnet::impl::LinnetCpuLowerVectorsBase<CpuLowerVectorsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();

    // Masks become mask operands of the transfers; then accumulators leave
    // the reduction loops.
    {
      RewritePatternSet patterns(ctx);
      patterns.add<StridedCopyToLinalgCopy>(ctx);
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    func.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
    linalg::hoistRedundantVectorTransfers(func);
    // Not linalg::hoistRedundantVectorBroadcasts: MLIR 22's moves the
    // iteration argument's vector.extract out of the loop but leaves its
    // uses inside reading the hoisted extract of the initial value, so the
    // loop no longer carries it (test/Target/CPU/matmul_transposed_bf16.mlir,
    // `linear_row`, where a single row's accumulator is a broadcast).

    // Contractions to outer products first (alone: mixed with the transpose
    // and shape-cast lowerings they would be unrolled to scalars), then outer
    // products to FMAs, reductions to per-row reductions, masks and shape
    // changes to 1-D operations.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorContractLoweringPatterns(
          patterns, vector::VectorContractLowering::OuterProduct,
          /*benefit=*/1, /*disableOuterProductLowering=*/true);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorOuterProductLoweringPatterns(patterns);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      vector::populateVectorMaskOpLoweringPatterns(patterns);
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateVectorBroadcastLoweringPatterns(patterns);
      vector::populateVectorShapeCastLoweringPatterns(patterns);
      vector::populateVectorTransposeLoweringPatterns(
          patterns, vector::VectorTransposeLowering::Shuffle1D);
      vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
      vector::populateVectorGatherLoweringPatterns(patterns);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }

    // n-D transfers to unrolled 1-D transfers.
    {
      RewritePatternSet patterns(ctx);
      VectorTransferToSCFOptions options;
      options.enableFullUnroll().setTargetRank(1);
      populateVectorToSCFConversionPatterns(patterns, options);
      vector::populateVectorTransferLoweringPatterns(patterns,
                                                     /*maxTransferRank=*/1);
      vector::populateVectorToVectorCanonicalizationPatterns(patterns);
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
  }
};

} // namespace

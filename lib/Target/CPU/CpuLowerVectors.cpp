//===- CpuLowerVectors.cpp - vector code on memrefs down to 1-D vectors ---===//
//
// After bufferization the vectorized tiles still hold n-D, masked vector ops
// (`vector.contract`, `vector.multi_reduction`, n-D transfers). This pass
// hoists each contraction's accumulator out of its reduction loop, then
// lowers everything to the 1-D vector ops that convert-vector-to-llvm maps
// one to one onto LLVM vectors (a contraction becomes broadcasts and FMAs,
// a register tile's sums of lanes a tree of shuffles and adds).
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

/// The lanes of `n` outputs summed together: a `vector.multi_reduction <add>`
/// of the last dimension of [..., L] (a register tile's unreduced lanes after
/// its k loop), n and L powers of two. Summing each output's L lanes alone
/// costs about log2(L) shuffles and adds per output; instead, each step
/// takes two vectors that each hold g outputs of w lanes, adds the first
/// halves of every output's lanes to the second halves, and packs the
/// result into one vector of 2g outputs of w / 2 lanes, until one lane per
/// output is left: 16 outputs of 16 lanes take 15 adds (and 30 two-source
/// shuffles) instead of 64 adds and 64 shuffles, and come out in order, in
/// one vector, as the store after them wants. The lanes are added in the
/// order LLVM's own reduction of each output's vector adds them (lane i with
/// lane i + w / 2), so the sums are the same to the bit.
struct SumLanesPairwise : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp reduce,
                                PatternRewriter &rewriter) const override {
    VectorType source = reduce.getSourceVectorType();
    int64_t rank = source.getRank();
    if (reduce.getKind() != vector::CombiningKind::ADD || rank < 2 ||
        source.isScalable() || !isa<FloatType>(source.getElementType()) ||
        reduce.isMasked() ||
        reduce.getReductionDims() != ArrayRef<int64_t>{rank - 1})
      return failure();
    int64_t lanes = source.getShape().back();
    int64_t outputs = computeProduct(source.getShape().drop_back());
    if (outputs < 2 || lanes < 2 || !llvm::isPowerOf2_64(outputs) ||
        !llvm::isPowerOf2_64(lanes))
      return failure();

    Location loc = reduce.getLoc();
    auto flatType = VectorType::get({outputs, lanes}, source.getElementType());
    Value flat = vector::ShapeCastOp::create(rewriter, loc, flatType,
                                             reduce.getSource());
    SmallVector<Value> groups;
    for (int64_t row = 0; row < outputs; ++row)
      groups.push_back(vector::ExtractOp::create(rewriter, loc, flat, row));
    // Each vector of `groups` holds lanes / width outputs of `width` lanes.
    // With fewer outputs than lanes the last vector is paired with itself:
    // its first lanes are what counts.
    for (int64_t width = lanes; width > 1; width /= 2) {
      SmallVector<int64_t> low, high;
      for (int64_t from : {int64_t(0), lanes})
        for (int64_t output = 0; output < lanes / width; ++output)
          for (int64_t lane = 0; lane < width / 2; ++lane) {
            low.push_back(from + output * width + lane);
            high.push_back(from + output * width + width / 2 + lane);
          }
      SmallVector<Value> halved;
      for (size_t i = 0; i < groups.size(); i += 2) {
        Value other = i + 1 < groups.size() ? groups[i + 1] : groups[i];
        Value first =
            vector::ShuffleOp::create(rewriter, loc, groups[i], other, low);
        Value second =
            vector::ShuffleOp::create(rewriter, loc, groups[i], other, high);
        halved.push_back(arith::AddFOp::create(rewriter, loc, first, second));
      }
      groups = std::move(halved);
    }
    auto resultFlat = VectorType::get({outputs}, source.getElementType());
    Value result;
    if (outputs < lanes) {
      result = vector::ExtractStridedSliceOp::create(
          rewriter, loc, groups.front(), {0}, {outputs}, {1});
    } else {
      result = arith::ConstantOp::create(rewriter, loc, resultFlat,
                                         rewriter.getZeroAttr(resultFlat));
      for (auto [index, group] : llvm::enumerate(groups))
        result = vector::InsertStridedSliceOp::create(
            rewriter, loc, group, result, {int64_t(index) * lanes}, {1});
    }
    Value acc =
        vector::ShapeCastOp::create(rewriter, loc, resultFlat, reduce.getAcc());
    result = arith::AddFOp::create(rewriter, loc, result, acc);
    rewriter.replaceOpWithNewOp<vector::ShapeCastOp>(
        reduce, reduce.getDestType(), result);
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
      patterns.add<SumLanesPairwise>(ctx, /*benefit=*/2);
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

//===- CpuKeepF32InKernels.cpp - bf16 rounded only where it is stored -----===//
//
// The CPU computes bf16 arithmetic in f32 (arith-emulate-unsupported-floats
// widens every operand and rounds every result back to bf16), so a kernel
// that fuses several bf16 operations rounds after each of them. A result
// that is widened again right away (`extf(truncf(x))`) is read as the f32
// value it was: inside a kernel intermediate results keep f32, and bf16
// rounding happens where a value is stored (a tensor between kernels, a
// state), which is closer to the mathematics and costs nothing.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUKEEPF32INKERNELS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// `extf(truncf(x))` to f32, with x f32 and a bf16 in between, is x.
struct WidenedRounding : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp extend,
                                PatternRewriter &rewriter) const override {
    auto round = extend.getIn().getDefiningOp<arith::TruncFOp>();
    if (!round || round.getIn().getType() != extend.getType() ||
        !getElementTypeOrSelf(round.getType()).isBF16())
      return failure();
    rewriter.replaceOp(extend, round.getIn());
    return success();
  }
};

struct CpuKeepF32InKernelsPass
    : linnet::impl::LinnetCpuKeepF32InKernelsBase<CpuKeepF32InKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<WidenedRounding>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

//===- CpuApproximateMath.cpp - vector math without library calls ---------===//
//
// LLVM has no vector form of `exp` or `log1p` on x86 without a vector math
// library, so a `math.exp` on vector<32xf32> became 32 scalar calls of libm's
// expf with the lanes extracted and inserted around them (a softmax's, a
// SiLU's). MLIR's polynomial approximations compute them with arithmetic on
// the whole vector instead, to about one ulp of f32 (range reduction and a
// minimax polynomial; MLIR's Math dialect tests bound their error).
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUAPPROXIMATEMATH
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The math ops the model computes on vectors that LLVM would scalarize.
bool isApproximated(StringRef name) {
  return llvm::is_contained(
      {"math.exp", "math.expm1", "math.log", "math.log1p", "math.log2"}, name);
}

struct CpuApproximateMathPass
    : linnet::impl::LinnetCpuApproximateMathBase<CpuApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

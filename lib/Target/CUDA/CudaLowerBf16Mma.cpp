//===- CudaLowerBf16Mma.cpp - bf16 mma.sync to NVVM -----------------------===//
//
// MLIR 22's nvgpu-to-nvvm conversion deduces an mma's PTX types from f16,
// tf32, i8 and f64 fragments only; a bf16 one fails. PTX's
// mma.m16n8k16.bf16 takes A as four and B as two 32-bit registers of two
// bf16 each (the first element in the low half) and four f32 sums, which is
// nvvm.mma.sync's form.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDALOWERBF16MMA
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

bool isBf16(nvgpu::MmaSyncOp mma) {
  return cast<VectorType>(mma.getMatrixA().getType()).getElementType().isBF16();
}

/// m16n8k16 with f32 sums: A vector<4x2>, B vector<2x2>, sums vector<2x2>.
bool hasLoweredShape(nvgpu::MmaSyncOp mma) {
  auto sumsType = cast<VectorType>(mma.getMatrixC().getType());
  return cast<VectorType>(mma.getMatrixA().getType()).getShape() ==
             ArrayRef<int64_t>{4, 2} &&
         cast<VectorType>(mma.getMatrixB().getType()).getShape() ==
             ArrayRef<int64_t>{2, 2} &&
         sumsType.getShape() == ArrayRef<int64_t>{2, 2} &&
         sumsType.getElementType().isF32();
}

struct LowerBf16Mma : OpRewritePattern<nvgpu::MmaSyncOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nvgpu::MmaSyncOp mma,
                                PatternRewriter &rewriter) const override {
    auto sumsType = cast<VectorType>(mma.getMatrixC().getType());
    if (!isBf16(mma) || !hasLoweredShape(mma))
      return rewriter.notifyMatchFailure(mma, "not a bf16 m16n8k16");
    Location loc = mma.getLoc();
    Type i32 = rewriter.getI32Type();
    auto pairType = VectorType::get({2}, rewriter.getBF16Type());
    auto registers = [&](Value fragment, int64_t count) {
      SmallVector<Value> packed;
      for (int64_t reg = 0; reg < count; ++reg) {
        Value pair = vector::ExtractOp::create(rewriter, loc, fragment,
                                               ArrayRef<int64_t>{reg});
        Value word = vector::BitCastOp::create(
            rewriter, loc, VectorType::get({1}, i32),
            vector::ShapeCastOp::create(rewriter, loc, pairType, pair));
        packed.push_back(vector::ExtractOp::create(rewriter, loc, word,
                                                   ArrayRef<int64_t>{0}));
      }
      return packed;
    };
    SmallVector<Value> a = registers(mma.getMatrixA(), 4);
    SmallVector<Value> b = registers(mma.getMatrixB(), 2);
    SmallVector<Value> sums;
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t pair = 0; pair < 2; ++pair)
        sums.push_back(vector::ExtractOp::create(
            rewriter, loc, mma.getMatrixC(), ArrayRef<int64_t>{half, pair}));
    Type f32 = rewriter.getF32Type();
    auto resultType =
        LLVM::LLVMStructType::getLiteral(getContext(), {f32, f32, f32, f32});
    auto product = NVVM::MmaOp::create(
        rewriter, loc, resultType, a, b, sums, ArrayRef<int64_t>{16, 8, 16},
        std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> results;
    for (int64_t i = 0; i < 4; ++i)
      results.push_back(LLVM::ExtractValueOp::create(rewriter, loc, product,
                                                     ArrayRef<int64_t>{i}));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(mma, sumsType, results);
    return success();
  }
};

struct CudaLowerBf16MmaPass
    : linnet::impl::LinnetCudaLowerBf16MmaBase<CudaLowerBf16MmaPass> {
  void runOnOperation() override {
    WalkResult shapes = getOperation()->walk([](nvgpu::MmaSyncOp mma) {
      if (!isBf16(mma) || hasLoweredShape(mma))
        return WalkResult::advance();
      mma.emitOpError("on bf16 is lowered only as m16n8k16 with f32 sums");
      return WalkResult::interrupt();
    });
    if (shapes.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<LowerBf16Mma>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

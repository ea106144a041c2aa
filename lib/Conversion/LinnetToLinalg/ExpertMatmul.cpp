//===- ExpertMatmul.cpp - lower linnet.expert_matmul to linalg ------------===//
//
// A routed matmul gathers its weight rows by expert id, which an indexing map
// cannot express, so the weights are read with tensor.extract inside one
// linalg.generic, parallel over r, j, o and reducing over i:
//
//   y[r,j,o] = sum_i valid ? w[id, o, i] * x[r,(j,)i] : 0
//
// where id = experts[r,j], valid = 0 <= id < X, and an invalid id reads the
// in-bounds row 0 and discards it.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

struct ExpertMatmulLowering : OpRewritePattern<ExpertMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ExpertMatmulOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    Value input = op.getInput(), weights = op.getWeights(),
          experts = op.getExperts();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type elementType = inputType.getElementType();

    SmallVector<OpFoldResult> expertSizes = getSizes(rewriter, loc, experts);
    SmallVector<OpFoldResult> weightSizes = getSizes(rewriter, loc, weights);
    SmallVector<OpFoldResult> resultSizes = {expertSizes[0], expertSizes[1],
                                             weightSizes[1]};
    Value numExperts =
        getValueOrCreateConstantIndexOp(rewriter, loc, weightSizes[0]);

    // Loops r j o i.
    enum { R, J, O, I };
    AffineMap inputMap = inputType.getRank() == 2
                             ? projection(context, 4, {R, I})
                             : projection(context, 4, {R, J, I});
    Value sums =
        createGeneric(
            rewriter, loc, ValueRange{input, experts},
            createFilled(rewriter, loc, resultSizes, f32, 0.0),
            {inputMap, projection(context, 4, {R, J}),
             projection(context, 4, {R, J, O})},
            iterators(3, 1),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value zero = arith::ConstantIndexOp::create(b, nloc, 0);
              Value id = toIndex(b, nloc, args[1]);
              Value valid = arith::AndIOp::create(
                  b, nloc,
                  arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::sge, id,
                                        zero),
                  arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::slt, id,
                                        numExperts));
              Value row = arith::SelectOp::create(b, nloc, valid, id, zero);
              Value weight = tensor::ExtractOp::create(
                  b, nloc, weights,
                  ValueRange{row, linalg::IndexOp::create(b, nloc, O),
                             linalg::IndexOp::create(b, nloc, I)});
              Value product =
                  arith::MulFOp::create(b, nloc, extendToF32(b, nloc, weight),
                                        extendToF32(b, nloc, args[0]));
              Value term = arith::SelectOp::create(
                  b, nloc, valid, product, createFloat(b, nloc, f32, 0.0));
              linalg::YieldOp::create(
                  b, nloc,
                  ValueRange{arith::AddFOp::create(b, nloc, args[2], term)});
            })
            .getResult(0);

    Value result = roundTensor(rewriter, loc, sums, elementType);
    rewriter.replaceOp(
        op, castIfNeeded(rewriter, loc, result, op.getResult().getType()));
    return success();
  }
};

} // namespace

void populateExpertMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpertMatmulLowering>(patterns.getContext());
}

} // namespace linnet::lowering

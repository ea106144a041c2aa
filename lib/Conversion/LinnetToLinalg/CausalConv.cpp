//===- CausalConv.cpp - lower linnet.causal_conv to linalg ----------------===//
//
// The depthwise causal convolution reads xx = concat(history, input) along
// the sequence axis, so it is one linalg.generic with a convolution-style map
// on xx (parallel over b, s, c, reduction over the taps w):
//
//   y[b,s,c]           = sum_w taps[c,w] * xx[b, s + w, c]        (f32)
//   new_history[b,j,c] = xx[b, clamp(lengths[b], 0, S) + j, c]    (gather)
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

struct CausalConvLowering : OpRewritePattern<CausalConvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CausalConvOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    Value input = op.getInput(), taps = op.getTaps(), history = op.getHistory(),
          lengths = op.getLengths();
    Type elementType = cast<RankedTensorType>(input.getType()).getElementType();

    // xx = history ‖ input along the sequence axis.
    Value extended = tensor::ConcatOp::create(rewriter, loc, /*dim=*/1,
                                              ValueRange{history, input});

    // y[b,s,c] = sum_w taps[c,w] * xx[b, s + w, c]; loops b s c w.
    AffineExpr b, s, c, w;
    bindDims(context, b, s, c, w);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {b, s + w, c}, context),
                                   AffineMap::get(4, 0, {c, w}, context),
                                   AffineMap::get(4, 0, {b, s, c}, context)};
    SmallVector<OpFoldResult> inputSizes = getSizes(rewriter, loc, input);
    Value sums =
        createGeneric(rewriter, loc, ValueRange{extended, taps},
                      createFilled(rewriter, loc, inputSizes, f32, 0.0), maps,
                      iterators(3, 1),
                      [&](OpBuilder &nb, Location nloc, ValueRange args) {
                        Value product = arith::MulFOp::create(
                            nb, nloc, extendToF32(nb, nloc, args[1]),
                            extendToF32(nb, nloc, args[0]));
                        linalg::YieldOp::create(
                            nb, nloc,
                            ValueRange{arith::AddFOp::create(nb, nloc, args[2],
                                                             product)});
                      })
            .getResult(0);
    Value output = roundTensor(rewriter, loc, sums, elementType);

    // new_history[b,j,c] = xx[b, clamp(lengths[b], 0, S) + j, c]
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, inputSizes[1]);
    SmallVector<OpFoldResult> historySizes = getSizes(rewriter, loc, history);
    Value newHistory =
        createGeneric(
            rewriter, loc, ValueRange{lengths},
            createEmpty(rewriter, loc, historySizes, elementType),
            {projection(context, 3, {0}), rewriter.getMultiDimIdentityMap(3)},
            iterators(3),
            [&](OpBuilder &nb, Location nloc, ValueRange args) {
              Value zero = arith::ConstantIndexOp::create(nb, nloc, 0);
              Value length = arith::MinSIOp::create(
                  nb, nloc,
                  arith::MaxSIOp::create(nb, nloc, toIndex(nb, nloc, args[0]),
                                         zero),
                  steps);
              Value row = arith::AddIOp::create(
                  nb, nloc, length, linalg::IndexOp::create(nb, nloc, 1));
              Value element = tensor::ExtractOp::create(
                  nb, nloc, extended,
                  ValueRange{linalg::IndexOp::create(nb, nloc, 0), row,
                             linalg::IndexOp::create(nb, nloc, 2)});
              linalg::YieldOp::create(nb, nloc, element);
            })
            .getResult(0);

    rewriter.replaceOp(
        op, {castIfNeeded(rewriter, loc, output, op.getOutput().getType()),
             castIfNeeded(rewriter, loc, newHistory,
                          op.getNewHistory().getType())});
    return success();
  }
};

} // namespace

void populateCausalConvPatterns(RewritePatternSet &patterns) {
  patterns.add<CausalConvLowering>(patterns.getContext());
}

} // namespace linnet::lowering

//===- CausalConv.cpp - lower linnet.causal_conv to linalg ----------------===//
//
// The depthwise causal convolution reads xx = concat(history, input) along
// the sequence axis, so it is one linalg.generic with a convolution-style map
// on xx (parallel over b, s, c, reduction over the taps w):
//
//   y[b,s,c]           = sum_w taps[c,w] * xx[b, s + w, c]        (f32)
//   new_history[b,j,c] = xx[b, clamp(lengths[b], 0, S) + j, c]    (gather)
//
// xx is a linalg.generic that picks each element from history or input,
// not a tensor.concat, and new_history picks from them alone: a dispatch
// region can then compute its tile of xx inside the convolution's (on a
// GPU, a decode step's window is not a kernel and a copy of its own).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

/// Element [batch, row, channel] of history ‖ input (rows below `kept`
/// from history, the rest from input), read with an scf.if so that only
/// the row's own tensor is read.
Value pickRow(OpBuilder &b, Location loc, Value history, Value input,
              Value kept, Value batch, Value row, Value channel) {
  Value fromHistory =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, kept);
  auto branch = scf::IfOp::create(
      b, loc, fromHistory,
      [&](OpBuilder &tb, Location tloc) {
        Value element = tensor::ExtractOp::create(
            tb, tloc, history, ValueRange{batch, row, channel});
        scf::YieldOp::create(tb, tloc, element);
      },
      [&](OpBuilder &eb, Location eloc) {
        Value inputRow = arith::SubIOp::create(eb, eloc, row, kept);
        Value element = tensor::ExtractOp::create(
            eb, eloc, input, ValueRange{batch, inputRow, channel});
        scf::YieldOp::create(eb, eloc, element);
      });
  return branch.getResult(0);
}

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
    Value kept = getValueOrCreateConstantIndexOp(
        rewriter, loc, getSizes(rewriter, loc, history)[1]);
    auto pick = [&](OpBuilder &nb, Location nloc, Value batch, Value row,
                    Value channel) {
      return pickRow(nb, nloc, history, input, kept, batch, row, channel);
    };
    SmallVector<OpFoldResult> extendedSizes = getSizes(rewriter, loc, input);
    extendedSizes[1] = rewriter.createOrFold<arith::AddIOp>(
        loc, getValueOrCreateConstantIndexOp(rewriter, loc, extendedSizes[1]),
        kept);
    Value extended =
        createGeneric(rewriter, loc, ValueRange{},
                      createEmpty(rewriter, loc, extendedSizes, elementType),
                      {rewriter.getMultiDimIdentityMap(3)}, iterators(3),
                      [&](OpBuilder &nb, Location nloc, ValueRange) {
                        linalg::YieldOp::create(
                            nb, nloc,
                            pick(nb, nloc, linalg::IndexOp::create(nb, nloc, 0),
                                 linalg::IndexOp::create(nb, nloc, 1),
                                 linalg::IndexOp::create(nb, nloc, 2)));
                      })
            .getResult(0);

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
              linalg::YieldOp::create(
                  nb, nloc,
                  pick(nb, nloc, linalg::IndexOp::create(nb, nloc, 0), row,
                       linalg::IndexOp::create(nb, nloc, 2)));
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

//===- Ranking.cpp - lower linnet.rank and linnet.topk to linalg ----------===//
//
// Ranks come from an O(N^2) comparison generic over (..., i, j), parallel
// over the leading axes and i, reducing over j:
//
//   rank[..., i] = #{ j : x[..., j] beats x[..., i] }
//
// where x_j beats x_i when it is greater, or equal with j < i (NaN counts as
// greater than any number and equal to NaN), so the ranks of a slice are a
// permutation of 0 .. N-1. top-k inverts the first k ranks with a second
// reduction and gathers the values:
//
//   indices[..., m] = sum_i (rank[..., i] == m ? i : 0)
//   values[..., m]  = x[..., indices[..., m]]
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

/// Whether `other` (at index `j`) comes before `self` (at index `i`) in the
/// descending order.
Value beats(OpBuilder &b, Location loc, Value other, Value self, Value j,
            Value i) {
  auto cmp = [&](arith::CmpFPredicate predicate, Value lhs, Value rhs) {
    return arith::CmpFOp::create(b, loc, predicate, lhs, rhs).getResult();
  };
  Value otherNaN = cmp(arith::CmpFPredicate::UNO, other, other);
  Value selfNaN = cmp(arith::CmpFPredicate::UNO, self, self);
  Value greater = arith::OrIOp::create(
      b, loc, cmp(arith::CmpFPredicate::OGT, other, self),
      arith::AndIOp::create(
          b, loc, otherNaN,
          arith::XOrIOp::create(
              b, loc, selfNaN,
              arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1))));
  Value equal =
      arith::OrIOp::create(b, loc, cmp(arith::CmpFPredicate::OEQ, other, self),
                           arith::AndIOp::create(b, loc, otherNaN, selfNaN));
  Value before = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, i);
  return arith::OrIOp::create(b, loc, greater,
                              arith::AndIOp::create(b, loc, equal, before));
}

/// rank[..., i] for `input` of rank r, as an i32 tensor of its shape.
Value createRanks(OpBuilder &b, Location loc, Value input) {
  MLIRContext *context = b.getContext();
  unsigned rank = cast<RankedTensorType>(input.getType()).getRank();
  // Loops: the r axes of input (the last one is i), then j.
  SmallVector<unsigned> selfDims, otherDims;
  for (unsigned axis = 0; axis < rank; ++axis) {
    selfDims.push_back(axis);
    otherDims.push_back(axis + 1 == rank ? rank : axis);
  }
  Value zeros =
      linalg::FillOp::create(
          b, loc,
          ValueRange{arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0)},
          ValueRange{
              createEmpty(b, loc, getSizes(b, loc, input), b.getI32Type())})
          .getResult(0);
  return createGeneric(
             b, loc, ValueRange{input, input}, zeros,
             {projection(context, rank + 1, selfDims),
              projection(context, rank + 1, otherDims),
              projection(context, rank + 1, selfDims)},
             iterators(rank, 1),
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value i = linalg::IndexOp::create(nb, nloc, rank - 1);
               Value j = linalg::IndexOp::create(nb, nloc, rank);
               Value count = arith::ExtUIOp::create(
                   nb, nloc, nb.getI32Type(),
                   beats(nb, nloc, args[1], args[0], j, i));
               linalg::YieldOp::create(
                   nb, nloc,
                   ValueRange{arith::AddIOp::create(nb, nloc, args[2], count)});
             })
      .getResult(0);
}

struct RankLowering : OpRewritePattern<RankOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RankOp op,
                                PatternRewriter &rewriter) const override {
    Value ranks = createRanks(rewriter, op.getLoc(), op.getInput());
    rewriter.replaceOp(op, castIfNeeded(rewriter, op.getLoc(), ranks,
                                        op.getResult().getType()));
    return success();
  }
};

struct TopKLowering : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TopKOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value input = op.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    unsigned rank = inputType.getRank();
    Type i32 = rewriter.getI32Type();
    Value ranks = createRanks(rewriter, loc, input);

    SmallVector<OpFoldResult> resultSizes = getSizes(rewriter, loc, input);
    resultSizes.back() = rewriter.getIndexAttr(op.getK());

    // indices[..., m] = sum_i (rank[..., i] == m ? i : 0); loops (..., m, i).
    SmallVector<unsigned> rankDims, resultDims;
    for (unsigned axis = 0; axis < rank; ++axis) {
      rankDims.push_back(axis + 1 == rank ? rank : axis);
      resultDims.push_back(axis);
    }
    Value zeros =
        linalg::FillOp::create(
            rewriter, loc,
            ValueRange{arith::ConstantIntOp::create(rewriter, loc, i32, 0)},
            ValueRange{createEmpty(rewriter, loc, resultSizes, i32)})
            .getResult(0);
    Value indices =
        createGeneric(
            rewriter, loc, ValueRange{ranks}, zeros,
            {projection(context, rank + 1, rankDims),
             projection(context, rank + 1, resultDims)},
            iterators(rank, 1),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value m = arith::IndexCastOp::create(
                  b, nloc, i32, linalg::IndexOp::create(b, nloc, rank - 1));
              Value i = arith::IndexCastOp::create(
                  b, nloc, i32, linalg::IndexOp::create(b, nloc, rank));
              Value hit = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::eq, args[0], m);
              Value term = arith::SelectOp::create(
                  b, nloc, hit, i,
                  arith::ConstantIntOp::create(b, nloc, i32, 0));
              linalg::YieldOp::create(
                  b, nloc,
                  ValueRange{arith::AddIOp::create(b, nloc, args[1], term)});
            })
            .getResult(0);

    // values[..., m] = x[..., indices[..., m]]
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    Value values =
        createGeneric(
            rewriter, loc, ValueRange{indices},
            createEmpty(rewriter, loc, resultSizes, inputType.getElementType()),
            {identity, identity}, iterators(rank),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              SmallVector<Value> position;
              for (unsigned axis = 0; axis + 1 < rank; ++axis)
                position.push_back(linalg::IndexOp::create(b, nloc, axis));
              position.push_back(toIndex(b, nloc, args[0]));
              linalg::YieldOp::create(b, nloc,
                                      ValueRange{tensor::ExtractOp::create(
                                          b, nloc, input, position)});
            })
            .getResult(0);

    rewriter.replaceOp(
        op, {castIfNeeded(rewriter, loc, values, op.getValues().getType()),
             castIfNeeded(rewriter, loc, indices, op.getIndices().getType())});
    return success();
  }
};

} // namespace

void populateRankingPatterns(RewritePatternSet &patterns) {
  patterns.add<RankLowering, TopKLowering>(patterns.getContext());
}

} // namespace linnet::lowering

//===- Attention.cpp - lower linnet.attention to linalg -------------------===//
//
// Causal grouped-query attention as a chain of linalg.generic ops on f32
// tensors, over the keys some query can attend to (the first max_b offset[b]
// + S of the cache). The query heads are viewed as [Hk, G] (G = Hq / Hk) so
// that every indexing map stays a projection and the key/value heads are shared
// through the maps instead of being copied:
//
//   scores[b,h,g,s,l] = sum_d q[b,h,g,s,d] * k[b,h,l,d]
//   masked            = allowed(b,s,l) ? scale * scores : -inf
//   rowMax[b,h,g,s]   = max_l masked
//   weights           = masked == -inf ? 0 : exp(masked - rowMax)
//   rowSum[b,h,g,s]   = sum_l weights
//   acc[b,h,g,s,e]    = sum_l weights * v[b,h,l,e]
//   out               = rowSum > 0 ? round(acc / rowSum) : 0
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace linnet::lowering {
namespace {

/// Views the query heads of `query` ([B, Hq, S, D]) as [B, Hk, G, S, D].
Value expandQueryHeads(OpBuilder &b, Location loc, Value query,
                       OpFoldResult keyHeads, OpFoldResult group) {
  auto type = cast<RankedTensorType>(query.getType());
  std::optional<int64_t> staticKeyHeads = getConstantIntValue(keyHeads);
  std::optional<int64_t> staticGroup = getConstantIntValue(group);
  int64_t heads = ShapedType::kDynamic;
  if (staticKeyHeads && staticGroup)
    heads = *staticKeyHeads * *staticGroup;
  // expand_shape wants the collapsed size static exactly when both parts are.
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = heads;
  auto sourceType = RankedTensorType::get(shape, type.getElementType());
  query = castIfNeeded(b, loc, query, sourceType);

  SmallVector<OpFoldResult> sizes = getSizes(b, loc, query);
  SmallVector<OpFoldResult> expandedSizes = {sizes[0], keyHeads, group,
                                             sizes[2], sizes[3]};
  SmallVector<int64_t> expandedShape = {
      type.getDimSize(0), staticKeyHeads.value_or(ShapedType::kDynamic),
      staticGroup.value_or(ShapedType::kDynamic), type.getDimSize(2),
      type.getDimSize(3)};
  auto expandedType =
      RankedTensorType::get(expandedShape, type.getElementType());
  SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}, {4}};
  return tensor::ExpandShapeOp::create(b, loc, expandedType, query, groups,
                                       expandedSizes);
}

/// The keys any query can attend to: those before max_b offset[b] + S,
/// clamped to [0, L]. The rest of a cache (a prefill at position 0 reads S
/// of MaxSeq keys, a decode pos + 1) is never read.
Value attendedKeyCount(OpBuilder &b, Location loc, Value offset,
                       OpFoldResult rows, OpFoldResult queries,
                       OpFoldResult keys) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value largest =
      scf::ForOp::create(
          b, loc, zero, getValueOrCreateConstantIndexOp(b, loc, rows), one,
          ValueRange{zero},
          [&](OpBuilder &nb, Location nloc, Value r, ValueRange carried) {
            Value at = toIndex(nb, nloc,
                               tensor::ExtractOp::create(nb, nloc, offset, r));
            scf::YieldOp::create(
                nb, nloc,
                ValueRange{arith::MaxSIOp::create(nb, nloc, carried[0], at)});
          })
          .getResult(0);
  Value end = arith::AddIOp::create(
      b, loc, largest, getValueOrCreateConstantIndexOp(b, loc, queries));
  return arith::MinSIOp::create(b, loc,
                                arith::MaxSIOp::create(b, loc, end, zero),
                                getValueOrCreateConstantIndexOp(b, loc, keys));
}

/// The first `count` positions of a `[B, Hk, L, X]` key or value tensor.
Value leadingPositions(OpBuilder &b, Location loc, Value tensor, Value count) {
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, tensor);
  sizes[2] = count;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, tensor, SmallVector<OpFoldResult>(4, zero), sizes,
      SmallVector<OpFoldResult>(4, one));
}

struct AttentionLowering : OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value key = op.getKey(), value = op.getValue(), offset = op.getOffset(),
          scale = op.getScale(), lengths = op.getLengths();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elementType = resultType.getElementType();
    Type f32 = rewriter.getF32Type();

    SmallVector<OpFoldResult> querySizes =
        getSizes(rewriter, loc, op.getQuery());
    SmallVector<OpFoldResult> keySizes = getSizes(rewriter, loc, key);
    SmallVector<OpFoldResult> valueSizes = getSizes(rewriter, loc, value);
    OpFoldResult queryHeads = querySizes[1], keyHeads = keySizes[1];
    OpFoldResult group;
    std::optional<int64_t> staticQueryHeads = getConstantIntValue(queryHeads);
    std::optional<int64_t> staticKeyHeads = getConstantIntValue(keyHeads);
    if (staticQueryHeads && staticKeyHeads)
      group = rewriter.getIndexAttr(*staticQueryHeads / *staticKeyHeads);
    else
      group = arith::DivUIOp::create(
                  rewriter, loc,
                  getValueOrCreateConstantIndexOp(rewriter, loc, queryHeads),
                  getValueOrCreateConstantIndexOp(rewriter, loc, keyHeads))
                  .getResult();
    Value query =
        expandQueryHeads(rewriter, loc, op.getQuery(), keyHeads, group);
    Value keyCount = attendedKeyCount(rewriter, loc, offset, querySizes[0],
                                      querySizes[2], keySizes[2]);
    key = leadingPositions(rewriter, loc, key, keyCount);
    value = leadingPositions(rewriter, loc, value, keyCount);
    keySizes[2] = keyCount;
    valueSizes[2] = keyCount;

    // Loop dimensions: b h g s, then l (keys) or e (value dims), then d.
    enum { B, H, G, S, L, D };
    SmallVector<OpFoldResult> scoreSizes = {querySizes[0], keyHeads, group,
                                            querySizes[2], keySizes[2]};
    SmallVector<OpFoldResult> rowSizes(scoreSizes.begin(),
                                       scoreSizes.end() - 1);
    auto map = [&](unsigned numLoops, ArrayRef<unsigned> dims) {
      return projection(context, numLoops, dims);
    };

    // scores[b,h,g,s,l] = sum_d q[b,h,g,s,d] * k[b,h,l,d]
    Value scores =
        createContraction(rewriter, loc, query, key, scoreSizes,
                          {map(6, {B, H, G, S, D}), map(6, {B, H, L, D}),
                           map(6, {B, H, G, S, L})},
                          5);

    // masked = allowed ? scale * scores : -inf, with allowed meaning
    // l <= offset[b] + s and l < lengths[b].
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> maskInputs = {scores, offset};
    SmallVector<AffineMap> maskMaps = {map(5, {B, H, G, S, L}), map(5, {B})};
    if (lengths) {
      maskInputs.push_back(lengths);
      maskMaps.push_back(map(5, {B}));
    }
    maskMaps.push_back(map(5, {B, H, G, S, L}));
    Value masked =
        createGeneric(
            rewriter, loc, maskInputs,
            createEmpty(rewriter, loc, scoreSizes, f32), maskMaps, iterators(5),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value s = linalg::IndexOp::create(b, nloc, S);
              Value l = linalg::IndexOp::create(b, nloc, L);
              Value last =
                  arith::AddIOp::create(b, nloc, toIndex(b, nloc, args[1]), s);
              Value allowed = arith::CmpIOp::create(
                  b, nloc, arith::CmpIPredicate::sle, l, last);
              if (lengths) {
                Value inRow =
                    arith::CmpIOp::create(b, nloc, arith::CmpIPredicate::slt, l,
                                          toIndex(b, nloc, args[2]));
                allowed = arith::AndIOp::create(b, nloc, allowed, inRow);
              }
              Value scaled = arith::MulFOp::create(b, nloc, args[0], scale);
              Value result = arith::SelectOp::create(
                  b, nloc, allowed, scaled, createFloat(b, nloc, f32, negInf));
              linalg::YieldOp::create(b, nloc, result);
            })
            .getResult(0);

    // rowMax[b,h,g,s] = max_l masked
    Value rowMax =
        createGeneric(
            rewriter, loc, masked,
            createFilled(rewriter, loc, rowSizes, f32, negInf),
            {map(5, {B, H, G, S, L}), map(5, {B, H, G, S})}, iterators(4, 1),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              linalg::YieldOp::create(b, nloc,
                                      ValueRange{arith::MaximumFOp::create(
                                          b, nloc, args[0], args[1])});
            })
            .getResult(0);

    // weights = masked == -inf ? 0 : exp(masked - rowMax); a row without an
    // allowed key thus gets only zero weights instead of NaN.
    Value weights =
        createGeneric(rewriter, loc, ValueRange{masked, rowMax},
                      createEmpty(rewriter, loc, scoreSizes, f32),
                      {map(5, {B, H, G, S, L}), map(5, {B, H, G, S}),
                       map(5, {B, H, G, S, L})},
                      iterators(5),
                      [&](OpBuilder &b, Location nloc, ValueRange args) {
                        Value isMasked = arith::CmpFOp::create(
                            b, nloc, arith::CmpFPredicate::OEQ, args[0],
                            createFloat(b, nloc, f32, negInf));
                        Value shifted =
                            arith::SubFOp::create(b, nloc, args[0], args[1]);
                        Value weight = arith::SelectOp::create(
                            b, nloc, isMasked, createFloat(b, nloc, f32, 0.0),
                            math::ExpOp::create(b, nloc, shifted));
                        linalg::YieldOp::create(b, nloc, weight);
                      })
            .getResult(0);

    // rowSum[b,h,g,s] = sum_l weights
    Value rowSum =
        createGeneric(
            rewriter, loc, weights,
            createFilled(rewriter, loc, rowSizes, f32, 0.0),
            {map(5, {B, H, G, S, L}), map(5, {B, H, G, S})}, iterators(4, 1),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              linalg::YieldOp::create(
                  b, nloc,
                  ValueRange{arith::AddFOp::create(b, nloc, args[1], args[0])});
            })
            .getResult(0);

    // acc[b,h,g,s,e] = sum_l weights[b,h,g,s,l] * v[b,h,l,e]; loop 4 is e,
    // loop 5 is l.
    enum { E = 4, LV = 5 };
    SmallVector<OpFoldResult> outSizes = {querySizes[0], keyHeads, group,
                                          querySizes[2], valueSizes[3]};
    Value acc =
        createContraction(rewriter, loc, weights, value, outSizes,
                          {map(6, {B, H, G, S, LV}), map(6, {B, H, LV, E}),
                           map(6, {B, H, G, S, E})},
                          5);

    // out = rowSum > 0 ? round(acc / rowSum) : 0
    Value normalized =
        createGeneric(
            rewriter, loc, ValueRange{acc, rowSum},
            createEmpty(rewriter, loc, outSizes, elementType),
            {map(5, {B, H, G, S, E}), map(5, {B, H, G, S}),
             map(5, {B, H, G, S, E})},
            iterators(5),
            [&](OpBuilder &b, Location nloc, ValueRange args) {
              Value zero = createFloat(b, nloc, f32, 0.0);
              Value any = arith::CmpFOp::create(
                  b, nloc, arith::CmpFPredicate::OGT, args[1], zero);
              Value quotient = arith::DivFOp::create(b, nloc, args[0], args[1]);
              Value result =
                  arith::SelectOp::create(b, nloc, any, quotient, zero);
              linalg::YieldOp::create(
                  b, nloc, roundFromF32(b, nloc, result, elementType));
            })
            .getResult(0);

    SmallVector<ReassociationIndices> groups = {{0}, {1, 2}, {3}, {4}};
    Value collapsed =
        tensor::CollapseShapeOp::create(rewriter, loc, normalized, groups);
    rewriter.replaceOp(op, castIfNeeded(rewriter, loc, collapsed, resultType));
    return success();
  }
};

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionLowering>(patterns.getContext());
}

} // namespace linnet::lowering

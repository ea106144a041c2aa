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
// (query s of a tile that starts at `start` sits at offset[b] + start + s)
// in blocks of keys with an online softmax; a block works on the queries
// that may see one of its keys (causal: those from its first key less the
// largest offset on), about half a prompt's scores.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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

/// max_b offset[b], at least 0.
Value largestOffset(OpBuilder &b, Location loc, Value offset,
                    OpFoldResult rows) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  return scf::ForOp::create(
             b, loc, zero, getValueOrCreateConstantIndexOp(b, loc, rows), one,
             ValueRange{zero},
             [&](OpBuilder &nb, Location nloc, Value r, ValueRange carried) {
               Value at = toIndex(
                   nb, nloc, tensor::ExtractOp::create(nb, nloc, offset, r));
               scf::YieldOp::create(nb, nloc,
                                    ValueRange{arith::MaxSIOp::create(
                                        nb, nloc, carried[0], at)});
             })
      .getResult(0);
}

/// The keys any query can attend to: those before max_b offset[b] + S
/// (`largest` the first), clamped to [0, L]. The rest of a cache (a prefill
/// at position 0 reads S of MaxSeq keys, a decode pos + 1) is never read.
Value attendedKeyCount(OpBuilder &b, Location loc, Value largest,
                       OpFoldResult queries, OpFoldResult keys) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value end = arith::AddIOp::create(
      b, loc, largest, getValueOrCreateConstantIndexOp(b, loc, queries));
  return arith::MinSIOp::create(b, loc,
                                arith::MaxSIOp::create(b, loc, end, zero),
                                getValueOrCreateConstantIndexOp(b, loc, keys));
}

struct AttentionLowering : OpRewritePattern<AttentionOp> {
  AttentionLowering(MLIRContext *context, const AttentionOptions &options)
      : OpRewritePattern(context), keyBlock(options.keyBlock),
        promptKeyBlock(options.promptKeyBlock),
        roundedWeights(options.roundedWeights) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Value key = op.getKey(), value = op.getValue(), offset = op.getOffset(),
          scale = op.getScale(), lengths = op.getLengths();
    auto resultType = cast<RankedTensorType>(op.getOutput().getType());
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
    // Positions count from `start` (a tile of queries): the largest offset
    // and each query's position take it in.
    Value start = op.getStart();
    Value largest = largestOffset(rewriter, loc, offset, querySizes[0]);
    if (start)
      largest = arith::AddIOp::create(rewriter, loc, largest, start);
    Value keyCount =
        attendedKeyCount(rewriter, loc, largest, querySizes[2], keySizes[2]);
    // Whether a block of keys may skip the queries before it: not where there
    // is one query (a decode step's, whose buffers keep static sizes).
    bool skipQueries = !isConstantIntValue(querySizes[2], 1);
    int64_t keysPerBlock =
        skipQueries && promptKeyBlock ? promptKeyBlock : keyBlock;
    // A prompt's weights in the values' type (bf16) with `roundedWeights`:
    // their product with the values then takes two bf16 operands (a GPU's
    // tensor cores); the block sums add the rounded weights, so that the
    // output divides what it summed by the sum of the same weights. Its
    // masked scores too, as HF's eager attention rounds the product of q
    // and k to bf16 before its f32 softmax: half the bytes of the largest
    // tensors of a prompt (scores and weights a block of keys) each of the
    // three times they are written or read.
    Type weightType = f32;
    if (roundedWeights && skipQueries)
      weightType = getElementTypeOrSelf(value.getType());

    // Loop dimensions: b h g s, then l (keys) or e (value dims), then d.
    enum { B, H, G, S, L, D };
    enum { E = 4, LV = 5 };
    SmallVector<OpFoldResult> rowSizes = {querySizes[0], keyHeads, group,
                                          querySizes[2]};
    SmallVector<OpFoldResult> outSizes = {querySizes[0], keyHeads, group,
                                          querySizes[2], valueSizes[3]};
    auto map = [&](unsigned numLoops, ArrayRef<unsigned> dims) {
      return projection(context, numLoops, dims);
    };
    double negInf = -std::numeric_limits<double>::infinity();
    auto rowMaps = [&](unsigned count) {
      return SmallVector<AffineMap>(count, map(4, {B, H, G, S}));
    };

    // The keys in blocks of `keysPerBlock`, the softmax kept online: each block
    // rescales what the earlier ones summed by exp(oldMax - newMax).
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, keysPerBlock);
    Value initialMax = createFilled(rewriter, loc, rowSizes, f32, negInf);
    Value initialSum = createFilled(rewriter, loc, rowSizes, f32, 0.0);
    Value initialAcc = createFilled(rewriter, loc, outSizes, f32, 0.0);
    auto blocks = scf::ForOp::create(
        rewriter, loc, zero, keyCount, step,
        ValueRange{initialMax, initialSum, initialAcc},
        [&](OpBuilder &b, Location nloc, Value first, ValueRange carried) {
          Value oldMax = carried[0], oldSum = carried[1], oldAcc = carried[2];
          // The queries before first - max_b offset[b] attend no key of
          // this block (a key l is allowed to query s of row b where l <=
          // offset[b] + s): their running max, sum and accumulators would
          // not change, so the block works on the rest alone, about half
          // the queries over a prompt's blocks. The start is an
          // affine.max/min, so that the sizes keep their bounds.
          Value queryStart = arith::ConstantIndexOp::create(b, nloc, 0);
          SmallVector<OpFoldResult> blockRows = rowSizes;
          Value blockQuery = query;
          // A block's queries of a [B, Hk, G, S, ...] tensor: from
          // queryStart on axis 3, `sizes` long.
          auto blockRowsOf = [&](Value tensor, ArrayRef<OpFoldResult> sizes,
                                 Value into = nullptr) -> Value {
            int64_t rank = sizes.size();
            SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
            offsets[3] = queryStart;
            SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
            if (into)
              return tensor::InsertSliceOp::create(b, nloc, tensor, into,
                                                   offsets, sizes, strides);
            return tensor::ExtractSliceOp::create(b, nloc, tensor, offsets,
                                                  sizes, strides);
          };
          if (skipQueries) {
            MLIRContext *ctx = b.getContext();
            AffineExpr d0 = getAffineDimExpr(0, ctx),
                       d1 = getAffineDimExpr(1, ctx),
                       s0 = getAffineSymbolExpr(0, ctx);
            Value queries =
                getValueOrCreateConstantIndexOp(b, nloc, querySizes[2]);
            // max(0, min(S, first - largest))
            Value before = affine::AffineMinOp::create(
                b, nloc, AffineMap::get(2, 1, {d0 - d1, s0}, ctx),
                ValueRange{first, largest, queries});
            queryStart = affine::AffineMaxOp::create(
                b, nloc,
                AffineMap::get(1, 0, {d0, getAffineConstantExpr(0, ctx)}, ctx),
                ValueRange{before});
            blockRows[3] =
                arith::SubIOp::create(b, nloc, queries, queryStart).getResult();
            auto sliceRows = [&](Value tensor) {
              SmallVector<OpFoldResult> sizes = getSizes(b, nloc, tensor);
              sizes[3] = blockRows[3];
              return blockRowsOf(tensor, sizes);
            };
            blockQuery = sliceRows(query);
            oldMax = sliceRows(oldMax);
            oldSum = sliceRows(oldSum);
            oldAcc = sliceRows(oldAcc);
          }
          // A block's new values back into the carried tensors.
          auto putBack = [&](Value slice, Value into) -> Value {
            if (!skipQueries)
              return slice;
            return blockRowsOf(slice, getSizes(b, nloc, slice), into);
          };
          SmallVector<OpFoldResult> blockOut = outSizes;
          blockOut[3] = blockRows[3];
          // An affine.min, so that the block's buffers have a known bound
          // (a GPU tile holds them in workgroup memory).
          AffineExpr keysLeft =
              b.getAffineSymbolExpr(0) - b.getAffineSymbolExpr(1);
          Value count = affine::AffineMinOp::create(
              b, nloc,
              AffineMap::get(0, 2,
                             {b.getAffineConstantExpr(keysPerBlock), keysLeft},
                             b.getContext()),
              ValueRange{keyCount, first});
          auto block = [&](Value tensor) {
            SmallVector<OpFoldResult> sizes = getSizes(b, nloc, tensor);
            sizes[2] = count;
            SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
            offsets[2] = first;
            return tensor::ExtractSliceOp::create(
                b, nloc, tensor, offsets, sizes,
                SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
          };
          Value keys = block(key), values = block(value);
          SmallVector<OpFoldResult> scoreSizes = blockRows;
          scoreSizes.push_back(count);

          // scores[b,h,g,s,l] = sum_d q[b,h,g,s,d] * k[b,h,first + l,d]
          Value scores =
              createContraction(b, nloc, blockQuery, keys, scoreSizes,
                                {map(6, {B, H, G, S, D}), map(6, {B, H, L, D}),
                                 map(6, {B, H, G, S, L})},
                                5);

          // masked = allowed ? scale * scores : -inf, with allowed meaning
          // first + l <= offset[b] + s and first + l < lengths[b].
          SmallVector<Value> maskInputs = {scores, offset};
          SmallVector<AffineMap> maskMaps = {map(5, {B, H, G, S, L}),
                                             map(5, {B})};
          if (lengths) {
            maskInputs.push_back(lengths);
            maskMaps.push_back(map(5, {B}));
          }
          maskMaps.push_back(map(5, {B, H, G, S, L}));
          Value masked =
              createGeneric(
                  b, nloc, maskInputs,
                  createEmpty(b, nloc, scoreSizes, weightType), maskMaps,
                  iterators(5),
                  [&](OpBuilder &nb, Location bloc, ValueRange args) {
                    Value s = arith::AddIOp::create(
                        nb, bloc, queryStart,
                        linalg::IndexOp::create(nb, bloc, S));
                    if (start)
                      s = arith::AddIOp::create(nb, bloc, s, start);
                    Value l = arith::AddIOp::create(
                        nb, bloc, first, linalg::IndexOp::create(nb, bloc, L));
                    Value last = arith::AddIOp::create(
                        nb, bloc, toIndex(nb, bloc, args[1]), s);
                    Value allowed = arith::CmpIOp::create(
                        nb, bloc, arith::CmpIPredicate::sle, l, last);
                    if (lengths) {
                      Value inRow = arith::CmpIOp::create(
                          nb, bloc, arith::CmpIPredicate::slt, l,
                          toIndex(nb, bloc, args[2]));
                      allowed = arith::AndIOp::create(nb, bloc, allowed, inRow);
                    }
                    Value scaled =
                        arith::MulFOp::create(nb, bloc, args[0], scale);
                    Value kept = arith::SelectOp::create(
                        nb, bloc, allowed, scaled,
                        createFloat(nb, bloc, f32, negInf));
                    linalg::YieldOp::create(
                        nb, bloc, roundFromF32(nb, bloc, kept, weightType));
                  })
                  .getResult(0);

          // A per-row reduction over the block's keys, from `initial`:
          // combine(element, accumulated).
          auto reduceKeys =
              [&](Value input, double initial,
                  function_ref<Value(OpBuilder &, Location, Value, Value)>
                      combine) {
                return createGeneric(
                           b, nloc, input,
                           createFilled(b, nloc, blockRows, f32, initial),
                           {map(5, {B, H, G, S, L}), map(5, {B, H, G, S})},
                           iterators(4, 1),
                           [&](OpBuilder &nb, Location bloc, ValueRange args) {
                             linalg::YieldOp::create(
                                 nb, bloc,
                                 ValueRange{combine(
                                     nb, bloc, extendToF32(nb, bloc, args[0]),
                                     args[1])});
                           })
                    .getResult(0);
              };

          // blockMax[b,h,g,s] = max_l masked
          Value blockMax = reduceKeys(
              masked, negInf,
              [](OpBuilder &nb, Location bloc, Value x, Value max) {
                return arith::MaximumFOp::create(nb, bloc, x, max).getResult();
              });

          // exp(x - max), 0 where x is -inf: a row without an allowed key
          // so far gets zero weights, not NaN.
          auto expOrZero = [&](OpBuilder &nb, Location bloc, Value x,
                               Value max) -> Value {
            Value isMasked =
                arith::CmpFOp::create(nb, bloc, arith::CmpFPredicate::OEQ, x,
                                      createFloat(nb, bloc, f32, negInf));
            return arith::SelectOp::create(
                nb, bloc, isMasked, createFloat(nb, bloc, f32, 0.0),
                math::ExpOp::create(nb, bloc,
                                    arith::SubFOp::create(nb, bloc, x, max)));
          };
          // rescale = exp(oldMax - newMax) with newMax = max(oldMax,
          // blockMax), read before newMax replaces oldMax in place (each
          // carried value is updated in its own buffer).
          Value rescale =
              createGeneric(
                  b, nloc, ValueRange{oldMax, blockMax},
                  createEmpty(b, nloc, blockRows, f32), rowMaps(3),
                  iterators(4),
                  [&](OpBuilder &nb, Location bloc, ValueRange args) {
                    Value max =
                        arith::MaximumFOp::create(nb, bloc, args[0], args[1]);
                    linalg::YieldOp::create(
                        nb, bloc,
                        ValueRange{expOrZero(nb, bloc, args[0], max)});
                  })
                  .getResult(0);
          Value newMax =
              createGeneric(b, nloc, ValueRange{blockMax}, oldMax, rowMaps(2),
                            iterators(4),
                            [&](OpBuilder &nb, Location bloc, ValueRange args) {
                              linalg::YieldOp::create(
                                  nb, bloc,
                                  ValueRange{arith::MaximumFOp::create(
                                      nb, bloc, args[1], args[0])});
                            })
                  .getResult(0);

          // weights = exp(masked - newMax), 0 where masked
          Value weights =
              createGeneric(
                  b, nloc, ValueRange{masked, newMax},
                  createEmpty(b, nloc, scoreSizes, weightType),
                  {map(5, {B, H, G, S, L}), map(5, {B, H, G, S}),
                   map(5, {B, H, G, S, L})},
                  iterators(5),
                  [&](OpBuilder &nb, Location bloc, ValueRange args) {
                    linalg::YieldOp::create(
                        nb, bloc,
                        roundFromF32(nb, bloc,
                                     expOrZero(nb, bloc,
                                               extendToF32(nb, bloc, args[0]),
                                               args[1]),
                                     weightType));
                  })
                  .getResult(0);

          // newSum = oldSum * rescale + sum_l weights, in oldSum's buffer
          Value blockSum = reduceKeys(
              weights, 0.0,
              [](OpBuilder &nb, Location bloc, Value x, Value sum) {
                return arith::AddFOp::create(nb, bloc, sum, x).getResult();
              });
          // old * rescale + block, written into old's own tensor; rescale
          // has the row loops, block and old all `loops`.
          auto rescaledSum = [&](Value old, Value block, unsigned loops) {
            AffineMap all = b.getMultiDimIdentityMap(loops);
            return createGeneric(
                       b, nloc, ValueRange{rescale, block}, old,
                       {map(loops, {B, H, G, S}), all, all}, iterators(loops),
                       [&](OpBuilder &nb, Location bloc, ValueRange args) {
                         Value kept =
                             arith::MulFOp::create(nb, bloc, args[2], args[0]);
                         linalg::YieldOp::create(
                             nb, bloc,
                             ValueRange{arith::AddFOp::create(nb, bloc, kept,
                                                              args[1])});
                       })
                .getResult(0);
          };
          Value newSum = rescaledSum(oldSum, blockSum, 4);

          // newAcc = oldAcc * rescale + sum_l weights * v[b,h,first + l,e],
          // in oldAcc's buffer
          Value blockAcc = createContraction(b, nloc, weights, values, blockOut,
                                             {map(6, {B, H, G, S, LV}),
                                              map(6, {B, H, LV, E}),
                                              map(6, {B, H, G, S, E})},
                                             5);
          Value newAcc = rescaledSum(oldAcc, blockAcc, 5);
          scf::YieldOp::create(b, nloc,
                               ValueRange{putBack(newMax, carried[0]),
                                          putBack(newSum, carried[1]),
                                          putBack(newAcc, carried[2])});
        });
    Value rowSum = blocks.getResult(1), acc = blocks.getResult(2);

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

private:
  int64_t keyBlock;
  int64_t promptKeyBlock;
  bool roundedWeights;
};

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns,
                               const AttentionOptions &options) {
  patterns.add<AttentionLowering>(patterns.getContext(), options);
}

} // namespace linnet::lowering

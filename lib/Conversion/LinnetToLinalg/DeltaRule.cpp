//===- DeltaRule.cpp - lower linnet.delta_rule to scf + linalg ------------===//
//
// The gated delta rule is a sequential scan over time, so it becomes one
// scf.for over S whose iteration arguments are the state [B, N, K, V] and the
// output [B, S, N, V]. Each step works on all rows and heads at once with
// linalg.generic ops that are parallel over b, n and the state dims:
//
//   decayed[b,n,k,v] = active(b) ? state * exp(g[b,n]) : state
//   kv[b,n,v]        = sum_k decayed[b,n,k,v] * key[b,n,k]
//   state'[b,n,k,v]  = active(b) ? decayed + key[b,n,k] * beta[b,n]
//                                  * (value[b,n,v] - kv[b,n,v]) : decayed
//   out[b,n,v]       = active(b) ? sum_k state'[b,n,k,v] * query[b,n,k] : 0
//
// with active(b) = t < lengths[b]. The new state is written into the carried
// one (destination-passing style), so bufferization updates one buffer in
// place and the loop yields values equivalent to its iteration arguments.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace linnet::lowering {
namespace {

/// The sizes of one time step of `tensor`: its own sizes with 1 on axis 1.
SmallVector<OpFoldResult> timeSliceSizes(OpBuilder &b, Location loc,
                                         Value tensor) {
  int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t axis = 0; axis < rank; ++axis)
    sizes.push_back(axis == 1 ? b.getIndexAttr(1)
                              : tensor::getMixedSize(b, loc, tensor, axis));
  return sizes;
}

/// The slice of `tensor` at time `t` along axis 1, with that axis dropped.
Value sliceAtTime(OpBuilder &b, Location loc, Value tensor, Value t) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> sizes = timeSliceSizes(b, loc, tensor);
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[1] = t;
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + 1);
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, tensor, offsets,
                                        sizes, strides);
}

/// Inserts `slice` ([B, N, V]) into `tensor` ([B, S, N, V]) at time `t`.
Value insertAtTime(OpBuilder &b, Location loc, Value slice, Value tensor,
                   Value t) {
  SmallVector<OpFoldResult> sizes = timeSliceSizes(b, loc, tensor);
  SmallVector<OpFoldResult> offsets(4, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  offsets[1] = t;
  return tensor::InsertSliceOp::create(b, loc, slice, tensor, offsets, sizes,
                                       strides);
}

/// `t < lengths`, for an i32 length inside a generic body.
Value isActive(OpBuilder &b, Location loc, Value t, Value length) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t,
                               toIndex(b, loc, length));
}

struct DeltaRuleLowering : OpRewritePattern<DeltaRuleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DeltaRuleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    Value query = op.getQuery(), key = op.getKey(), value = op.getValue(),
          beta = op.getBeta(), gate = op.getGate(), lengths = op.getLengths();

    SmallVector<OpFoldResult> querySizes = getSizes(rewriter, loc, query);
    SmallVector<OpFoldResult> valueSizes = getSizes(rewriter, loc, value);
    SmallVector<OpFoldResult> outSizes = {querySizes[0], querySizes[1],
                                          querySizes[2], valueSizes[3]};
    SmallVector<OpFoldResult> stepSizes = {querySizes[0], querySizes[2],
                                           valueSizes[3]};
    Value output = createFilled(rewriter, loc, outSizes, f32, 0.0);
    Value state = op.getInitial();

    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value steps = getValueOrCreateConstantIndexOp(rewriter, loc, querySizes[1]);

    // Loop dimensions of the state updates: b n k v.
    enum { B, N, K, V };
    auto map = [&](unsigned numLoops, ArrayRef<unsigned> dims) {
      return projection(context, numLoops, dims);
    };
    auto scan = scf::ForOp::create(
        rewriter, loc, zero, steps, one, ValueRange{state, output},
        [&](OpBuilder &b, Location nloc, Value t, ValueRange carried) {
          Value state = carried[0], output = carried[1];
          Value queryT = sliceAtTime(b, nloc, query, t);
          Value keyT = sliceAtTime(b, nloc, key, t);
          Value valueT = sliceAtTime(b, nloc, value, t);
          Value betaT = sliceAtTime(b, nloc, beta, t);
          Value gateT = sliceAtTime(b, nloc, gate, t);
          SmallVector<OpFoldResult> stateSizes = getSizes(b, nloc, state);

          // decayed = active ? state * exp(g) : state
          Value decayed =
              createGeneric(
                  b, nloc, ValueRange{state, gateT, lengths},
                  createEmpty(b, nloc, stateSizes, f32),
                  {map(4, {B, N, K, V}), map(4, {B, N}), map(4, {B}),
                   map(4, {B, N, K, V})},
                  iterators(4),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value scaled = arith::MulFOp::create(
                        nb, bodyLoc, args[0],
                        math::ExpOp::create(nb, bodyLoc, args[1]));
                    Value result = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[2]), scaled,
                        args[0]);
                    linalg::YieldOp::create(nb, bodyLoc, result);
                  })
                  .getResult(0);

          // kv[b,n,v] = sum_k decayed[b,n,k,v] * key[b,n,k]; loops b n v k.
          enum { VR = 2, KR = 3 };
          Value kv =
              createGeneric(
                  b, nloc, ValueRange{decayed, keyT},
                  createFilled(b, nloc, stepSizes, f32, 0.0),
                  {map(4, {B, N, KR, VR}), map(4, {B, N, KR}),
                   map(4, {B, N, VR})},
                  iterators(3, 1),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value product =
                        arith::MulFOp::create(nb, bodyLoc, args[0], args[1]);
                    linalg::YieldOp::create(
                        nb, bodyLoc,
                        ValueRange{arith::AddFOp::create(nb, bodyLoc, args[2],
                                                         product)});
                  })
                  .getResult(0);

          // state' = active ? decayed + key * beta * (value - kv) : decayed
          Value updated =
              createGeneric(
                  b, nloc,
                  ValueRange{decayed, keyT, valueT, kv, betaT, lengths},
                  // Written into the carried state, so that the loop can
                  // update one buffer in place.
                  state,
                  {map(4, {B, N, K, V}), map(4, {B, N, K}), map(4, {B, N, V}),
                   map(4, {B, N, V}), map(4, {B, N}), map(4, {B}),
                   map(4, {B, N, K, V})},
                  iterators(4),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value error =
                        arith::SubFOp::create(nb, bodyLoc, args[2], args[3]);
                    Value delta =
                        arith::MulFOp::create(nb, bodyLoc, error, args[4]);
                    Value step =
                        arith::MulFOp::create(nb, bodyLoc, args[1], delta);
                    Value next =
                        arith::AddFOp::create(nb, bodyLoc, args[0], step);
                    Value result = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[5]), next,
                        args[0]);
                    linalg::YieldOp::create(nb, bodyLoc, result);
                  })
                  .getResult(0);

          // out[b,n,v] = active ? sum_k state'[b,n,k,v] * query[b,n,k] : 0
          Value outT =
              createGeneric(
                  b, nloc, ValueRange{updated, queryT, lengths},
                  createFilled(b, nloc, stepSizes, f32, 0.0),
                  {map(4, {B, N, KR, VR}), map(4, {B, N, KR}), map(4, {B}),
                   map(4, {B, N, VR})},
                  iterators(3, 1),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value product =
                        arith::MulFOp::create(nb, bodyLoc, args[0], args[1]);
                    Value term = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[2]), product,
                        createFloat(nb, bodyLoc, f32, 0.0));
                    linalg::YieldOp::create(nb, bodyLoc,
                                            ValueRange{arith::AddFOp::create(
                                                nb, bodyLoc, args[3], term)});
                  })
                  .getResult(0);

          Value nextOutput = insertAtTime(b, nloc, outT, output, t);
          scf::YieldOp::create(b, nloc, ValueRange{updated, nextOutput});
        });

    Value finalOutput = castIfNeeded(rewriter, loc, scan.getResult(1),
                                     op.getOutput().getType());
    Value finalState = castIfNeeded(rewriter, loc, scan.getResult(0),
                                    op.getFinalState().getType());
    rewriter.replaceOp(op, {finalOutput, finalState});
    return success();
  }
};

} // namespace

void populateDeltaRulePatterns(RewritePatternSet &patterns) {
  patterns.add<DeltaRuleLowering>(patterns.getContext());
}

} // namespace linnet::lowering

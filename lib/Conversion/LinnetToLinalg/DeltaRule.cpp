//===- DeltaRule.cpp - lower linnet.delta_rule to scf + linalg ------------===//
//
// The gated delta rule is a sequential scan over time, so it becomes one
// scf.for over S whose iteration arguments are the state [B, N, K, V] and the
// output [B, S, N, V]. Each step works on all rows and heads at once with
// linalg.generic ops that are parallel over b, n and the state dims, and
// reads the state twice and writes it once (the decayed state is never
// stored; the output is taken from what the first pass read):
//
//   kv[b,n,v]    = sum_k state[b,n,k,v] * key[b,n,k]
//   sq[b,n,v]    = sum_k state[b,n,k,v] * query[b,n,k]
//   kq[b,n]      = sum_k key[b,n,k] * query[b,n,k]
//   decay[b,n]   = active(b) ? exp(g[b,n]) : 1
//   delta[b,n,v] = active(b) ? beta[b,n] * (value[b,n,v] - decay * kv) : 0
//   state'       = decay * state + key[b,n,k] * delta[b,n,v]
//   out[b,n,v]   = active(b) ? decay * sq + delta * kq : 0   (= state'^T query)
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
    SmallVector<OpFoldResult> stepSizes = {querySizes[0], querySizes[2],
                                           valueSizes[3]};
    Value output = fillWith(rewriter, loc, op.getOutputInit(), 0.0);
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

          // kv[b,n,v] = sum_k state[b,n,k,v] * key[b,n,k] and
          // sq[b,n,v] = sum_k state[b,n,k,v] * query[b,n,k]; loops b n v k.
          enum { VR = 2, KR = 3 };
          auto stateTimes = [&](Value vector) {
            return createContraction(b, nloc, state, vector, stepSizes,
                                     {map(4, {B, N, KR, VR}),
                                      map(4, {B, N, KR}), map(4, {B, N, VR})},
                                     3);
          };
          Value kv = stateTimes(keyT), sq = stateTimes(queryT);

          // kq[b,n] = sum_k key[b,n,k] * query[b,n,k]; loops b n k.
          SmallVector<OpFoldResult> headSizes = {stepSizes[0], stepSizes[1]};
          Value kq = createContraction(
              b, nloc, keyT, queryT, headSizes,
              {map(3, {B, N, 2}), map(3, {B, N, 2}), map(3, {B, N})}, 2);

          // decay[b,n] = active ? exp(g) : 1
          Value decay =
              createGeneric(
                  b, nloc, ValueRange{gateT, lengths},
                  createEmpty(b, nloc, headSizes, f32),
                  {map(2, {B, N}), map(2, {B}), map(2, {B, N})}, iterators(2),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value result = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[1]),
                        math::ExpOp::create(nb, bodyLoc, args[0]),
                        createFloat(nb, bodyLoc, f32, 1.0));
                    linalg::YieldOp::create(nb, bodyLoc, result);
                  })
                  .getResult(0);

          // delta[b,n,v] = active ? beta * (value - decay * kv) : 0, the
          // update's factor u of the decayed state.
          Value delta =
              createGeneric(
                  b, nloc, ValueRange{valueT, kv, decay, betaT, lengths},
                  createEmpty(b, nloc, stepSizes, f32),
                  {map(3, {B, N, 2}), map(3, {B, N, 2}), map(3, {B, N}),
                   map(3, {B, N}), map(3, {B}), map(3, {B, N, 2})},
                  iterators(3),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value decayedKv =
                        arith::MulFOp::create(nb, bodyLoc, args[2], args[1]);
                    Value error =
                        arith::SubFOp::create(nb, bodyLoc, args[0], decayedKv);
                    Value factor =
                        arith::MulFOp::create(nb, bodyLoc, error, args[3]);
                    Value result = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[4]), factor,
                        createFloat(nb, bodyLoc, f32, 0.0));
                    linalg::YieldOp::create(nb, bodyLoc, result);
                  })
                  .getResult(0);

          // state' = decay * state + key * delta (the state unchanged where
          // inactive: decay 1, delta 0), written into the carried state so
          // that the loop updates one buffer in place.
          Value updated =
              createGeneric(
                  b, nloc, ValueRange{decay, keyT, delta}, state,
                  {map(4, {B, N}), map(4, {B, N, K}), map(4, {B, N, V}),
                   map(4, {B, N, K, V})},
                  iterators(4),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value kept =
                        arith::MulFOp::create(nb, bodyLoc, args[0], args[3]);
                    Value step =
                        arith::MulFOp::create(nb, bodyLoc, args[1], args[2]);
                    linalg::YieldOp::create(nb, bodyLoc,
                                            ValueRange{arith::AddFOp::create(
                                                nb, bodyLoc, kept, step)});
                  })
                  .getResult(0);

          // out[b,n,v] = state'^T query = decay * sq + delta * kq (0 where
          // inactive): the new state need not be read again.
          Value outT =
              createGeneric(
                  b, nloc, ValueRange{sq, delta, decay, kq, lengths},
                  createEmpty(b, nloc, stepSizes, f32),
                  {map(3, {B, N, 2}), map(3, {B, N, 2}), map(3, {B, N}),
                   map(3, {B, N}), map(3, {B}), map(3, {B, N, 2})},
                  iterators(3),
                  [&](OpBuilder &nb, Location bodyLoc, ValueRange args) {
                    Value decayed =
                        arith::MulFOp::create(nb, bodyLoc, args[2], args[0]);
                    Value added =
                        arith::MulFOp::create(nb, bodyLoc, args[1], args[3]);
                    Value sum =
                        arith::AddFOp::create(nb, bodyLoc, decayed, added);
                    Value result = arith::SelectOp::create(
                        nb, bodyLoc, isActive(nb, bodyLoc, t, args[4]), sum,
                        createFloat(nb, bodyLoc, f32, 0.0));
                    linalg::YieldOp::create(nb, bodyLoc, result);
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

//===- WarpScan.cpp - a prompt's delta rule, a value column a warp --------===//
//
// For a column (b, n, v) and lane l, with s_j = state[b, n, l + 32 j, v]:
//
//   for t in [0, S):
//     kv = sum_k s k_t, sq = sum_k s q_t, kq = sum_k k_t q_t   (shuffles)
//     decay = active ? exp(g_t) : 1
//     delta = active ? beta_t (value_t - decay kv) : 0
//     s     = decay s + k_t delta
//     out_t = active ? decay sq + delta kq : 0                  (lane 0)
//
// with active = t < lengths[b]: the lowering of DeltaRule.cpp, the same sums
// in another order. Every lane runs every shuffle: the warps step through
// the columns alike (a warp past the last computes the last again and
// stores nothing), and elements past the key size are zeros.
//
//===----------------------------------------------------------------------===//

#include "WarpScan.h"

#include "WarpReduction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace linnet {

LogicalResult lowerDeltaRuleToWarps(RewriterBase &rewriter, DeltaRuleOp op,
                                    Value thread, int64_t threadsPerBlock) {
  Location loc = op.getLoc();
  auto keyType = dyn_cast<MemRefType>(op.getKey().getType());
  if (!keyType)
    return op.emitOpError("is run as a warp scan only on buffers");
  int64_t keys = keyType.getDimSize(3);
  if (ShapedType::isDynamic(keys))
    return op.emitOpError("is run as a warp scan only with a static key size");
  const int64_t parts = llvm::divideCeil(keys, kWarpSize);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Type f32 = b.getF32Type();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto constant = [&](double value) -> Value {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(float(value)));
  };
  auto below = [&](Value lhs, Value rhs) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
  };
  auto both = [&](Value lhs, Value rhs) -> Value {
    return arith::AndIOp::create(b, loc, lhs, rhs);
  };
  auto add = [&](Value lhs, Value rhs) -> Value {
    return arith::AddFOp::create(b, loc, lhs, rhs);
  };
  auto mul = [&](Value lhs, Value rhs) -> Value {
    return arith::MulFOp::create(b, loc, lhs, rhs);
  };
  // memref[indices] where `inside` (null: always), 0 elsewhere.
  auto loadOrZero = [&](Value memref, ValueRange indices,
                        Value inside) -> Value {
    if (!inside)
      return memref::LoadOp::create(b, loc, memref, indices);
    return linnet::loadOrZero(b, loc, memref, indices, inside);
  };
  auto storeIf = [&](Value inside, Value value, Value memref,
                     ValueRange indices) {
    scf::IfOp::create(b, loc, inside, [&](OpBuilder &then, Location at) {
      memref::StoreOp::create(then, at, value, memref, indices);
      scf::YieldOp::create(then, at);
    });
  };

  Value query = op.getQuery(), key = op.getKey(), value = op.getValue(),
        beta = op.getBeta(), gate = op.getGate(), output = op.getOutputInit(),
        state = op.getInitial();
  auto dim = [&](Value memref, int64_t axis) -> Value {
    return memref::DimOp::create(b, loc, memref, axis);
  };
  Value rows = dim(value, 0), tokens = dim(value, 1), heads = dim(value, 2),
        columns = dim(value, 3);
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, rows, heads), columns);
  Value warpSize = index(kWarpSize);
  Value lane = arith::RemUIOp::create(b, loc, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, loc, thread, warpSize);
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0));
  // Lane l's rows of the state, and where the key size is no multiple of 32
  // whether each is one.
  SmallVector<Value> keyRows, keyInside;
  for (int64_t part = 0; part < parts; ++part) {
    keyRows.push_back(
        arith::AddIOp::create(b, loc, lane, index(part * kWarpSize)));
    keyInside.push_back(
        keys % kWarpSize == 0 ? Value() : below(keyRows.back(), index(keys)));
  }

  // The columns, a warp each, every warp stepping alike.
  auto columnLoop = scf::ForOp::create(b, loc, index(0), total,
                                       index(threadsPerBlock / kWarpSize));
  b.setInsertionPointToStart(columnLoop.getBody());
  Value column =
      arith::AddIOp::create(b, loc, columnLoop.getInductionVar(), warp);
  Value owned = below(column, total);
  Value last = arith::SubIOp::create(b, loc, total, index(1));
  column = arith::MinUIOp::create(b, loc, column, last);
  ValueRange position = affine::AffineDelinearizeIndexOp::create(
                            b, loc, column, ValueRange{rows, heads, columns},
                            /*hasOuterBound=*/true)
                            .getResults();
  Value row = position[0], head = position[1], col = position[2];
  Value length = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, op.getLengths(), ValueRange{row}));

  // What the scan reads of token t (zeros past the last): its key and
  // query rows, value, beta and gate.
  auto loadToken = [&](Value t) {
    Value inside = below(t, tokens);
    SmallVector<Value> loaded;
    for (Value source : {key, query})
      for (int64_t part = 0; part < parts; ++part)
        loaded.push_back(loadOrZero(
            source, ValueRange{row, t, head, keyRows[part]},
            keyInside[part] ? both(inside, keyInside[part]) : inside));
    loaded.push_back(loadOrZero(value, ValueRange{row, t, head, col}, inside));
    loaded.push_back(loadOrZero(beta, ValueRange{row, t, head}, inside));
    loaded.push_back(loadOrZero(gate, ValueRange{row, t, head}, inside));
    return loaded;
  };

  SmallVector<Value> carried;
  for (int64_t part = 0; part < parts; ++part)
    carried.push_back(loadOrZero(
        state, ValueRange{row, head, keyRows[part], col}, keyInside[part]));
  llvm::append_range(carried, loadToken(index(0)));
  auto scan = scf::ForOp::create(b, loc, index(0), tokens, index(1), carried);
  b.setInsertionPointToStart(scan.getBody());
  Value t = scan.getInductionVar();
  ValueRange args = scan.getRegionIterArgs();
  ValueRange s = args.take_front(parts);
  ValueRange keyT = args.slice(parts, parts),
             queryT = args.slice(2 * parts, parts);
  Value valueT = args[3 * parts], betaT = args[3 * parts + 1],
        gateT = args[3 * parts + 2];
  // The next token's reads first: in flight while this one's sums run.
  SmallVector<Value> next =
      loadToken(arith::AddIOp::create(b, loc, t, index(1)));

  Value sums[3];
  for (int64_t part = 0; part < parts; ++part) {
    Value products[3] = {mul(s[part], keyT[part]), mul(s[part], queryT[part]),
                         mul(keyT[part], queryT[part])};
    for (auto [sum, product] : llvm::zip(sums, products))
      sum = part == 0 ? product : add(sum, product);
  }
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
    for (Value &sum : sums)
      sum = add(sum, gpu::ShuffleOp::create(b, loc, sum, offset, kWarpSize,
                                            gpu::ShuffleMode::XOR)
                         .getShuffleResult());
  Value kv = sums[0], sq = sums[1], kq = sums[2];

  Value active =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t, length);
  Value decay = arith::SelectOp::create(
      b, loc, active, math::ExpOp::create(b, loc, gateT), constant(1.0));
  Value delta = arith::SelectOp::create(
      b, loc, active,
      mul(betaT, arith::SubFOp::create(b, loc, valueT, mul(decay, kv))),
      constant(0.0));
  SmallVector<Value> yielded;
  for (int64_t part = 0; part < parts; ++part)
    yielded.push_back(add(mul(decay, s[part]), mul(keyT[part], delta)));
  Value out = arith::SelectOp::create(
      b, loc, active, add(mul(decay, sq), mul(delta, kq)), constant(0.0));
  storeIf(both(firstLane, owned), out, output, ValueRange{row, t, head, col});
  llvm::append_range(yielded, next);
  scf::YieldOp::create(b, loc, yielded);

  b.setInsertionPointAfter(scan);
  for (int64_t part = 0; part < parts; ++part)
    storeIf(keyInside[part] ? both(owned, keyInside[part]) : owned,
            scan.getResult(part), state,
            ValueRange{row, head, keyRows[part], col});
  rewriter.eraseOp(op);
  return success();
}

} // namespace linnet

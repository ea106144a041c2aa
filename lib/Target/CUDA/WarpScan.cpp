//===- WarpScan.cpp - a prompt's delta rule, a value column 8 lanes -------===//
//
// For a column (b, n, v) and its lane l (of kScanLanesPerColumn), with
// state[b, n, l R + j, v] = c s_j (c a scale, at first 1):
//
//   for t in [0, S):
//     kv = sum_k s k_t, sq = sum_k s q_t                       (shuffles)
//     kq = sum_k k_t q_t          (the block's, from a window; shuffles)
//     c     = c exp(g_t)
//     delta = beta_t (value_t - c kv)
//     out_t = c sq + delta kq                                   (lane 0)
//     if c < kLeastScanScale: s = c s, c = 1
//     s     = s + k_t (delta / c)
//
// for t below lengths[b], and out_t = 0 after it: the lowering of
// DeltaRule.cpp (where the state itself is decayed, s = decay s + k_t
// delta), the same sums in another order (each lane's part in two chains of
// fused multiply-adds, so that a token waits on half as many). Tokens go two an
// iteration, each read a token ahead; the iterations whose reads are all inside
// the prompt first, then the last one or two tokens. k_t . q_t is the same for
// every column of a head, and a block's columns are all of one row and head
// (the CUDA target's tiles; no other is lowered): its groups of lanes sum it
// once a token for a window of tokens into workgroup memory, between two
// barriers, and the columns read it from there. Every lane runs every shuffle:
// the groups step through the columns alike (a group past the last computes the
// last again and stores nothing), and elements past the key size are zeros. At
// full size (K = V = 128) a token is 106 SASS instructions a warp of 4 columns
// where the scale stays, and 2.75 more for its window's products
// (bench/cuda_issue.py; 142 where each column summed k_t . q_t, a decay
// multiplied the rows and each token tested the row's length), where a
// column a warp took 153 a column.
//
//===----------------------------------------------------------------------===//

#include "WarpScan.h"

#include "IndexBuilder.h"
#include "WarpReduction.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace linnet {
namespace {

static_assert(kScanLanesPerColumn > 0 && kWarpSize % kScanLanesPerColumn == 0 &&
                  (kScanLanesPerColumn & (kScanLanesPerColumn - 1)) == 0,
              "a column's lanes are a power of two within a warp");

/// The scan of one tile of a delta rule, built by every thread of a block.
class ScanBuilder {
public:
  ScanBuilder(OpBuilder &b, DeltaRuleOp op, Value thread,
              int64_t threadsPerBlock, Value window)
      : b(b), loc(op.getLoc()), ix{b, loc}, op(op),
        threadsPerBlock(threadsPerBlock), window(window) {
    keys = cast<MemRefType>(op.getKey().getType()).getDimSize(3);
    rowsPerLane = llvm::divideCeil(keys, kScanLanesPerColumn);
    Value lanes = ix.constant(kScanLanesPerColumn);
    part = arith::RemUIOp::create(b, loc, thread, lanes);
    group = arith::DivUIOp::create(b, loc, thread, lanes);
    Value firstRow = ix.mul(part, rowsPerLane);
    for (int64_t j = 0; j < rowsPerLane; ++j) {
      keyRows.push_back(ix.add(firstRow, ix.constant(j)));
      keyInside.push_back(keys % kScanLanesPerColumn == 0
                              ? Value()
                              : ix.below(keyRows.back(), ix.constant(keys)));
    }
  }

  /// Elements of a vector load of the key and query rows (16 bytes), where
  /// a lane's rows are whole vectors; 0 where they are not.
  int64_t vectorWidth() {
    auto type = cast<MemRefType>(op.getKey().getType());
    int64_t width = kVectorBytes * 8 / type.getElementTypeBitWidth();
    bool rowsAllow =
        keys % kScanLanesPerColumn == 0 && rowsPerLane % width == 0 &&
        hasUnitLastStride(type) &&
        hasUnitLastStride(cast<MemRefType>(op.getQuery().getType()));
    return rowsAllow ? width : 0;
  }

  /// The loop over the tile's columns, each group of lanes scanning one;
  /// the key and query rows read `width` elements at a time (0: one).
  void buildColumns(int64_t width);

private:
  /// Two of a lane's rows whose products a column sums.
  using Products = std::pair<ArrayRef<Value>, ArrayRef<Value>>;

  /// For each pair (x, y), the sum over the column's rows of x_j y_j: each
  /// lane's part in two chains (even and odd rows, so that a sum waits on
  /// half as many), then the column's lanes' parts by butterfly shuffles.
  SmallVector<Value> columnSums(ArrayRef<Products> factors) {
    SmallVector<std::array<Value, 2>> chains(factors.size());
    for (int64_t j = 0; j < rowsPerLane; ++j)
      for (auto [pair, chain] : llvm::zip(factors, chains)) {
        Value &link = chain[j % 2];
        link = j < 2 ? mul(pair.first[j], pair.second[j])
                     : fma(pair.first[j], pair.second[j], link);
      }
    SmallVector<Value> sums;
    for (std::array<Value, 2> &chain : chains)
      sums.push_back(rowsPerLane > 1
                         ? arith::AddFOp::create(b, loc, chain[0], chain[1])
                         : chain[0]);
    for (int32_t offset = kScanLanesPerColumn / 2; offset > 0; offset /= 2)
      for (Value &sum : sums)
        sum = arith::AddFOp::create(
            b, loc, sum,
            gpu::ShuffleOp::create(b, loc, sum, offset, kWarpSize,
                                   gpu::ShuffleMode::XOR)
                .getShuffleResult());
    return sums;
  }

  Value f32Constant(double value) {
    return arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                          APFloat(float(value)));
  }
  Value fma(Value a, Value x, Value c) {
    return math::FmaOp::create(b, loc, a, x, c);
  }
  Value mul(Value lhs, Value rhs) {
    return arith::MulFOp::create(b, loc, lhs, rhs);
  }
  Value loadOrZero(Value memref, ValueRange indices, Value inside) {
    if (!inside)
      return memref::LoadOp::create(b, loc, memref, indices);
    return linnet::loadOrZero(b, loc, memref, indices, inside);
  }
  void storeIf(Value inside, Value value, Value memref, ValueRange indices) {
    scf::IfOp::create(b, loc, inside, [&](OpBuilder &then, Location at) {
      memref::StoreOp::create(then, at, value, memref, indices);
      scf::YieldOp::create(then, at);
    });
  }
  /// A lane's rows of `source` ([B, S, N, K]) at token `t` of row `row` and
  /// head `head`, zeros where `inside` is false (null: always inside) and
  /// past the key size.
  void loadRows(Value source, Value row, Value t, Value head, Value inside,
                int64_t width, SmallVectorImpl<Value> &loaded);

  OpBuilder &b;
  Location loc;
  IndexBuilder ix;
  DeltaRuleOp op;
  int64_t threadsPerBlock;
  /// The products k_t . q_t of a window of tokens (workgroup memory).
  Value window;
  int64_t keys = 0, rowsPerLane = 0;
  Value part, group;
  SmallVector<Value> keyRows, keyInside;
};

void ScanBuilder::loadRows(Value source, Value row, Value t, Value head,
                           Value inside, int64_t width,
                           SmallVectorImpl<Value> &loaded) {
  if (!width) {
    for (int64_t j = 0; j < rowsPerLane; ++j) {
      Value rowInside = !keyInside[j] ? inside
                        : !inside     ? keyInside[j]
                                      : ix.both(inside, keyInside[j]);
      loaded.push_back(
          loadOrZero(source, ValueRange{row, t, head, keyRows[j]}, rowInside));
    }
    return;
  }
  auto type = cast<MemRefType>(source.getType());
  auto vectorType = VectorType::get({width}, type.getElementType());
  auto loadVector = [&](OpBuilder &at, Location where, int64_t j) -> Value {
    return vector::LoadOp::create(
        at, where, vectorType, source, ValueRange{row, t, head, keyRows[j]},
        /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
  };
  for (int64_t j = 0; j < rowsPerLane; j += width) {
    Value chunk;
    if (!inside) {
      chunk = loadVector(b, loc, j);
    } else {
      chunk = scf::IfOp::create(
                  b, loc, inside,
                  [&](OpBuilder &then, Location at) {
                    scf::YieldOp::create(then, at, loadVector(then, at, j));
                  },
                  [&](OpBuilder &otherwise, Location at) {
                    Value zeros = arith::ConstantOp::create(
                        otherwise, at, vectorType,
                        DenseElementsAttr::get(
                            vectorType,
                            otherwise.getZeroAttr(type.getElementType())));
                    scf::YieldOp::create(otherwise, at, zeros);
                  })
                  .getResult(0);
    }
    for (int64_t e = 0; e < width; ++e)
      loaded.push_back(vector::ExtractOp::create(b, loc, chunk, e));
  }
}

void ScanBuilder::buildColumns(int64_t width) {
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
  Value firstLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          part, ix.constant(0));

  // The columns, a group of lanes each, every group stepping alike.
  auto columnLoop =
      scf::ForOp::create(b, loc, ix.constant(0), total,
                         ix.constant(threadsPerBlock / kScanLanesPerColumn));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(columnLoop.getBody());
  Value column = ix.add(columnLoop.getInductionVar(), group);
  Value owned = ix.below(column, total);
  column = arith::MinUIOp::create(
      b, loc, column, arith::SubIOp::create(b, loc, total, ix.constant(1)));
  ValueRange position = affine::AffineDelinearizeIndexOp::create(
                            b, loc, column, ValueRange{rows, heads, columns},
                            /*hasOuterBound=*/true)
                            .getResults();
  Value row = position[0], head = position[1], col = position[2];
  Value length = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, op.getLengths(), ValueRange{row}));
  // The tokens the loops run: the block's columns are of one row, so they
  // stop at its length (the tokens after it only output zeros) and no token
  // tests it.
  Value scanned = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, length, ix.constant(0)), tokens);

  // What the scan reads of token t: the lane's rows of its key and query,
  // its column's value, beta and gate; zeros where `inside` is false (null:
  // always inside).
  auto loadToken = [&](Value t, Value inside) {
    SmallVector<Value> loaded;
    loadRows(key, row, t, head, inside, width, loaded);
    loadRows(query, row, t, head, inside, width, loaded);
    loaded.push_back(loadOrZero(value, ValueRange{row, t, head, col}, inside));
    loaded.push_back(loadOrZero(beta, ValueRange{row, t, head}, inside));
    loaded.push_back(loadOrZero(gate, ValueRange{row, t, head}, inside));
    return loaded;
  };

  const int64_t n = rowsPerLane;
  // One token of the scan: `read` what loadToken read of token `t`, `s`
  // the lane's rows of the state over its `scale` (both updated); `inside`
  // (null: always) whether `t` is a token of the prompt: one past the last
  // changes nothing.
  Value windowStart; // the first token of the window the loops are in
  auto step = [&](Value t, ArrayRef<Value> read, SmallVectorImpl<Value> &s,
                  Value &scale, Value inside) {
    ArrayRef<Value> keyT = read.take_front(n), queryT = read.slice(n, n);
    Value valueT = read[2 * n], betaT = read[2 * n + 1],
          gateT = read[2 * n + 2];
    SmallVector<Value> sums = columnSums({{s, keyT}, {s, queryT}});
    Value kv = sums[0], sq = sums[1];
    Value kq = memref::LoadOp::create(
        b, loc, window,
        ValueRange{arith::SubIOp::create(b, loc, t, windowStart)});

    // A token past the prompt changes nothing and is not stored.
    Value stored = ix.both(firstLane, owned);
    if (inside)
      stored = ix.both(stored, inside);
    auto where = [&](Value value, double otherwise) -> Value {
      return inside ? arith::SelectOp::create(b, loc, inside, value,
                                              f32Constant(otherwise))
                          .getResult()
                    : value;
    };
    // exp of a gate (at most 0): the fast form (ex2.approx), relative error
    // about 2^-21 there.
    Value decay = where(
        math::ExpOp::create(b, loc, gateT, arith::FastMathFlags::afn), 1.0);
    // The state decayed is s times `decayed`; kv and sq were sums of s.
    Value decayed = mul(scale, decay);
    Value delta = where(
        mul(betaT, fma(arith::NegFOp::create(b, loc, decayed), kv, valueT)),
        0.0);
    Value out = fma(delta, kq, mul(decayed, sq));
    storeIf(stored, out, output, ValueRange{row, t, head, col});
    // Where the scale fell below kLeastScanScale, it goes into the rows.
    // It depends on the head's gates only, so the branch is a warp's.
    Value small = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                        decayed, f32Constant(kLeastScanScale));
    auto rescaled = scf::IfOp::create(
        b, loc, small,
        [&](OpBuilder &then, Location at) {
          SmallVector<Value> rows;
          for (int64_t j = 0; j < n; ++j)
            rows.push_back(arith::MulFOp::create(then, at, s[j], decayed));
          scf::YieldOp::create(then, at, rows);
        },
        [&](OpBuilder &otherwise, Location at) {
          scf::YieldOp::create(otherwise, at, ValueRange(s));
        });
    scale = arith::SelectOp::create(b, loc, small, f32Constant(1.0), decayed);
    // delta / scale: the approximate reciprocal (rcp.approx), relative
    // error about 2^-23, as the rounding of a product.
    Value added =
        arith::DivFOp::create(b, loc, delta, scale, arith::FastMathFlags::afn);
    for (int64_t j = 0; j < n; ++j)
      s[j] = fma(keyT[j], added, rescaled.getResult(j));
  };

  // Two tokens `t` and `t` + 1, each token's reads issued a token ahead of
  // its sums (in flight while the token before runs): `first` what token
  // `t` read, `s` and `scale` the state (updated); returns what token
  // `t` + 2 read.
  // The reads of the second token then take the registers the first's
  // left, where a loop of one token a step moved every read value from one
  // register to another each token. Where `last` is null every token read
  // is inside the prompt; otherwise a read past `last` reads `last` again
  // (what it reads goes unused) and a token past it changes nothing.
  auto pair = [&](Value t, ArrayRef<Value> first, SmallVectorImpl<Value> &s,
                  Value &scale, Value last) {
    auto readAt = [&](int64_t ahead) {
      Value token = ix.add(t, ix.constant(ahead));
      return loadToken(
          last ? arith::MinUIOp::create(b, loc, token, last) : token, Value());
    };
    auto isInside = [&](Value token) -> Value {
      if (!last)
        return Value();
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, token,
                                   last);
    };
    SmallVector<Value> second = readAt(1);
    step(t, first, s, scale, isInside(t));
    SmallVector<Value> next = readAt(2);
    Value secondToken = ix.add(t, ix.constant(1));
    step(secondToken, second, s, scale, isInside(secondToken));
    return next;
  };

  // Pairs whose reads are all inside the prompt (tokens 0 .. S - 3 first,
  // so that the reads of t + 2 exist: their addresses are running
  // pointers), then the last one or two tokens as a pair whose reads stop
  // at the last token.
  // The state s_j carried is the state over a scale (the first n values,
  // then the scale): a token's decay multiplies the scale, not n rows.
  SmallVector<Value> carried;
  for (int64_t j = 0; j < n; ++j)
    carried.push_back(loadOrZero(state, ValueRange{row, head, keyRows[j], col},
                                 keyInside[j]));
  carried.push_back(f32Constant(1.0));
  Value inside = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, scanned, ix.constant(2)),
      ix.constant(0));
  // The first token left: the pairs' tokens (their count rounded up to a
  // pair), then the last one or two.
  Value done =
      ix.mul(arith::DivUIOp::create(b, loc, ix.add(inside, ix.constant(1)),
                                    ix.constant(2)),
             2);
  // The pairs from `first` to `end`, carrying `carried` (the state, its
  // scale, the reads of the next token).
  auto pairs = [&](Value first, Value end, ValueRange initial) {
    auto loop = scf::ForOp::create(b, loc, first, end, ix.constant(2), initial);
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange args = loop.getRegionIterArgs();
    SmallVector<Value> yielded(args.take_front(n));
    Value scale = args[n];
    SmallVector<Value> next =
        pair(loop.getInductionVar(), llvm::to_vector(args.drop_front(n + 1)),
             yielded, scale, Value());
    yielded.push_back(scale);
    llvm::append_range(yielded, next);
    scf::YieldOp::create(b, loc, yielded);
    return loop;
  };
  // The tokens from `first` to `end` (at most a pair, from `done`) with
  // `reads` those of `first`, carrying the state and its scale.
  // A loop of at most one iteration, not a branch: the emulated device
  // runs a loop with shuffles in it that carries values, not such a branch.
  auto last = [&](Value first, Value end, ValueRange state, ValueRange reads) {
    auto loop = scf::ForOp::create(b, loc, first, end, ix.constant(2), state);
    OpBuilder::InsertionGuard restGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> s(loop.getRegionIterArgs().take_front(n));
    Value scale = loop.getRegionIterArgs()[n];
    pair(loop.getInductionVar(), SmallVector<Value>(reads), s, scale,
         arith::SubIOp::create(b, loc, scanned, ix.constant(1)));
    s.push_back(scale);
    scf::YieldOp::create(b, loc, s);
    return loop;
  };

  // Windows of tokens: the block's threads first compute the window's
  // k_t . q_t (a token a group of lanes, in passes), then every column
  // scans the window's tokens reading them.
  int64_t groups = threadsPerBlock / kScanLanesPerColumn;
  int64_t size = cast<MemRefType>(window.getType()).getDimSize(0);
  // The windows carry the state and its scale; each window's pairs read
  // its first token again, so that the reads carried from one token to
  // the next stay in the pairs' loop (a loop around them that carried
  // them too cost a register move a read).
  auto windows = scf::ForOp::create(b, loc, ix.constant(0), scanned,
                                    ix.constant(size), carried);
  b.setInsertionPointToStart(windows.getBody());
  windowStart = windows.getInductionVar();
  gpu::BarrierOp::create(b, loc);
  // A loop, not unrolled: the passes' rows would take registers the
  // scan's state and reads hold.
  auto passes = scf::ForOp::create(b, loc, ix.constant(0), ix.constant(size),
                                   ix.constant(groups));
  {
    OpBuilder::InsertionGuard passGuard(b);
    b.setInsertionPointToStart(passes.getBody());
    Value slot = ix.add(group, passes.getInductionVar());
    Value token = ix.add(windowStart, slot);
    Value present = ix.below(token, scanned);
    SmallVector<Value> keyRowsT, queryRowsT;
    loadRows(key, row, token, head, present, width, keyRowsT);
    loadRows(query, row, token, head, present, width, queryRowsT);
    Value kq = columnSums({Products{keyRowsT, queryRowsT}})[0];
    storeIf(ix.both(firstLane, present), kq, window, ValueRange{slot});
  }
  gpu::BarrierOp::create(b, loc);
  Value windowEnd = ix.add(windowStart, ix.constant(size));
  SmallVector<Value> initial(windows.getRegionIterArgs());
  llvm::append_range(initial, loadToken(windowStart, Value()));
  scf::ForOp scan = pairs(
      windowStart, arith::MinUIOp::create(b, loc, windowEnd, inside), initial);
  scf::YieldOp::create(b, loc, scan.getResults().take_front(n + 1));
  // The last one or two tokens are in the last window (a window is a
  // whole number of pairs), whose products the buffer still holds.
  b.setInsertionPointAfter(windows);
  Value lastToken = arith::SubIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, scanned, ix.constant(1)),
      ix.constant(1));
  windowStart = ix.mul(
      arith::DivUIOp::create(b, loc, lastToken, ix.constant(size)), size);
  scf::ForOp rest = last(done, scanned, windows.getResults(),
                         loadToken(done, ix.below(done, scanned)));
  // The row's tokens past its length: zeros.
  auto zeros = scf::ForOp::create(b, loc, scanned, tokens, ix.constant(1));
  b.setInsertionPointToStart(zeros.getBody());
  storeIf(ix.both(firstLane, owned), f32Constant(0.0), output,
          ValueRange{row, zeros.getInductionVar(), head, col});
  b.setInsertionPointAfter(zeros);

  for (int64_t j = 0; j < n; ++j)
    storeIf(keyInside[j] ? ix.both(owned, keyInside[j]) : owned,
            mul(rest.getResult(j), rest.getResult(n)), state,
            ValueRange{row, head, keyRows[j], col});
}

} // namespace

MemRefType scanWindowType(DeltaRuleOp op, int64_t threadsPerBlock) {
  auto key = dyn_cast<MemRefType>(op.getKey().getType());
  if (!key || key.getDimSize(0) != 1 || key.getDimSize(2) != 1 ||
      threadsPerBlock % kScanLanesPerColumn != 0)
    return {};
  int64_t tokens = threadsPerBlock / kScanLanesPerColumn * kScanWindowPasses;
  auto space =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  return MemRefType::get({tokens}, key.getElementType(), AffineMap(), space);
}

LogicalResult lowerDeltaRuleToWarps(RewriterBase &rewriter, DeltaRuleOp op,
                                    Value thread, int64_t threadsPerBlock,
                                    Value window) {
  auto keyType = dyn_cast<MemRefType>(op.getKey().getType());
  if (!keyType)
    return op.emitOpError("is run as a warp scan only on buffers");
  if (ShapedType::isDynamic(keyType.getDimSize(3)))
    return op.emitOpError("is run as a warp scan only with a static key size");
  if (!window)
    return op.emitOpError("is run as a warp scan only where a block's tile is "
                          "of one row and head");

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  ScanBuilder scan(rewriter, op, thread, threadsPerBlock, window);
  if (int64_t width = scan.vectorWidth()) {
    // Vectors where the buffers' rows fall on 16-byte boundaries (known
    // only at run time), elements otherwise.
    Value aligned = arith::AndIOp::create(
        rewriter, loc, alignedForVectors(rewriter, loc, op.getKey()),
        alignedForVectors(rewriter, loc, op.getQuery()));
    auto versions = scf::IfOp::create(rewriter, loc, TypeRange{}, aligned,
                                      /*withElseRegion=*/true);
    rewriter.setInsertionPoint(versions.thenBlock()->getTerminator());
    scan.buildColumns(width);
    rewriter.setInsertionPoint(versions.elseBlock()->getTerminator());
    scan.buildColumns(0);
  } else {
    scan.buildColumns(0);
  }
  rewriter.eraseOp(op);
  return success();
}

} // namespace linnet

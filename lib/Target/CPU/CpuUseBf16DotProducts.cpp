//===- CpuUseBf16DotProducts.cpp - bf16 pairs multiplied in one instruction
//===//
//
// A dot product of bf16 operands along k, tiled by the Codegen passes,
// carries f32 lanes through its k loop: every iteration widens both bf16
// vectors and adds their product lane by lane (an FMA). A CPU with AVX512-BF16
// multiplies and adds pairs of bf16 lanes into one f32 lane in one
// instruction (`vdpbf16ps`, x86vector's `avx512.dot`) straight from the bf16
// registers: no widening, half the accumulators, twice the k per instruction.
// The pairs are summed in a different order than lane by lane, which is
// invisible where the lanes are summed after the loop anyway.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Matchers.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUUSEBF16DOTPRODUCTS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// bf16 lanes of the widest dot product instruction (512 bits).
constexpr int64_t kMaxDotLanes = 32;

/// A loop-carried f32 accumulator updated by `fma(extf(lhs), extf(rhs),
/// acc)` with bf16 `lhs` and `rhs`, that starts at zero and whose result is
/// only summed along its last dimension.
struct Bf16LaneProduct {
  unsigned index = 0;
  vector::FMAOp fma;
  Value lhs, rhs;
};

/// The bf16 vector `value` was widened from, if it was.
Value widenedFromBf16(Value value) {
  auto extend = value.getDefiningOp<arith::ExtFOp>();
  if (!extend || !getElementTypeOrSelf(extend.getIn().getType()).isBF16())
    return {};
  return extend.getIn();
}

std::optional<Bf16LaneProduct> matchBf16LaneProduct(scf::ForOp loop,
                                                    unsigned index) {
  BlockArgument acc = loop.getRegionIterArgs()[index];
  auto type = dyn_cast<VectorType>(acc.getType());
  if (!type || type.getRank() == 0 || type.isScalable() ||
      !type.getElementType().isF32() || !acc.hasOneUse())
    return std::nullopt;
  // The instruction takes 8, 16 or 32 bf16 lanes; longer rows in pieces of
  // 32.
  int64_t lanes = type.getShape().back();
  if (lanes != 8 && lanes != 16 && lanes % kMaxDotLanes != 0)
    return std::nullopt;
  auto fma = dyn_cast<vector::FMAOp>(*acc.getUsers().begin());
  if (!fma || fma.getAcc() != acc || !fma.getResult().hasOneUse() ||
      loop.getBody()->getTerminator()->getOperand(index) != fma.getResult())
    return std::nullopt;
  Bf16LaneProduct found;
  found.index = index;
  found.fma = fma;
  found.lhs = widenedFromBf16(fma.getLhs());
  found.rhs = widenedFromBf16(fma.getRhs());
  if (!found.lhs || !found.rhs ||
      !matchPattern(loop.getInitArgs()[index], m_AnyZeroFloat()))
    return std::nullopt;
  // Sums along the last dimension, of the lanes or of a reshape of them that
  // keeps that dimension (carryUnreducedLanes carries lanes without unit
  // dimensions and reshapes them back to the iteration space).
  auto sumsLastDimension = [&](Value lanes) {
    int64_t last = cast<VectorType>(lanes.getType()).getRank() - 1;
    return llvm::all_of(lanes.getUsers(), [&](Operation *user) {
      auto reduce = dyn_cast<vector::MultiDimReductionOp>(user);
      return reduce && reduce.getKind() == vector::CombiningKind::ADD &&
             reduce.getSource() == lanes &&
             llvm::is_contained(reduce.getReductionDims(), last);
    });
  };
  for (Operation *user : loop.getResult(index).getUsers()) {
    auto reshape = dyn_cast<vector::ShapeCastOp>(user);
    if (reshape ? reshape.getResultVectorType().getShape().back() != lanes ||
                      !sumsLastDimension(reshape.getResult())
                : !sumsLastDimension(loop.getResult(index)))
      return std::nullopt;
  }
  return found;
}

/// `type` with half the lanes in its last dimension.
VectorType withHalfTheLanes(VectorType type) {
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= 2;
  return VectorType::get(shape, type.getElementType());
}

/// Replaces the sums `users` of lanes by sums of `paired` (half the lanes).
void sumPairedLanes(RewriterBase &rewriter, Value lanes, Value paired) {
  for (Operation *user : llvm::make_early_inc_range(lanes.getUsers())) {
    rewriter.setInsertionPoint(user);
    if (auto reshape = dyn_cast<vector::ShapeCastOp>(user)) {
      Value pairedReshape = vector::ShapeCastOp::create(
          rewriter, reshape.getLoc(),
          withHalfTheLanes(reshape.getResultVectorType()), paired);
      sumPairedLanes(rewriter, reshape.getResult(), pairedReshape);
      continue;
    }
    auto reduce = cast<vector::MultiDimReductionOp>(user);
    rewriter.replaceOpWithNewOp<vector::MultiDimReductionOp>(
        reduce, paired, reduce.getAcc(), reduce.getReductionMask(),
        reduce.getKind());
  }
}

/// `acc + dot(lhs, rhs)` per vector of the last dimension, in pieces the
/// instruction takes: `lhs` and `rhs` are bf16 vectors of shape [..., L],
/// `acc` f32 of shape [..., L / 2].
Value buildPairedDotProducts(OpBuilder &b, Location loc, Value lhs, Value rhs,
                             Value acc) {
  auto accType = cast<VectorType>(acc.getType());
  ArrayRef<int64_t> outer = accType.getShape().drop_back();
  int64_t lanes = 2 * accType.getShape().back();
  int64_t piece = std::min(lanes, kMaxDotLanes);
  auto pieceAccType = VectorType::get({piece / 2}, b.getF32Type());
  Value result = acc;
  int64_t count = outer.empty() ? 1 : computeProduct(outer);
  SmallVector<int64_t> strides =
      outer.empty() ? SmallVector<int64_t>() : computeStrides(outer);
  for (int64_t linear = 0; linear < count; ++linear) {
    SmallVector<int64_t> position =
        outer.empty() ? SmallVector<int64_t>() : delinearize(linear, strides);
    auto row = [&](Value vector) -> Value {
      return position.empty()
                 ? vector
                 : vector::ExtractOp::create(b, loc, vector, position)
                       .getResult();
    };
    Value lhsRow = row(lhs), rhsRow = row(rhs), accRow = row(result);
    for (int64_t start = 0; start < lanes; start += piece) {
      auto slice = [&](Value vector, int64_t offset, int64_t size) -> Value {
        if (size == cast<VectorType>(vector.getType()).getShape().back())
          return vector;
        return vector::ExtractStridedSliceOp::create(b, loc, vector, {offset},
                                                     {size}, {1});
      };
      Value dot = x86vector::DotBF16Op::create(
          b, loc, pieceAccType, slice(accRow, start / 2, piece / 2),
          slice(lhsRow, start, piece), slice(rhsRow, start, piece));
      accRow = pieceAccType == accRow.getType()
                   ? dot
                   : vector::InsertStridedSliceOp::create(b, loc, dot, accRow,
                                                          {start / 2}, {1})
                         .getResult();
    }
    result = position.empty()
                 ? accRow
                 : vector::InsertOp::create(b, loc, accRow, result, position)
                       .getResult();
  }
  return result;
}

/// Replaces the accumulator of `found` by one of half the lanes updated
/// with paired dot products, and its sums after the loop by sums of those.
scf::ForOp usePairedDotProducts(RewriterBase &rewriter, scf::ForOp loop,
                                Bf16LaneProduct found) {
  Location loc = found.fma.getLoc();
  VectorType pairedType =
      withHalfTheLanes(cast<VectorType>(found.fma.getType()));
  rewriter.setInsertionPoint(loop);
  Value zero = arith::ConstantOp::create(rewriter, loc, pairedType,
                                         rewriter.getZeroAttr(pairedType));
  FailureOr<LoopLikeOpInterface> widened = loop.replaceWithAdditionalYields(
      rewriter, zero, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &b, Location, ArrayRef<BlockArgument> carried) {
        b.setInsertionPoint(found.fma);
        return SmallVector<Value>{
            buildPairedDotProducts(b, loc, found.lhs, found.rhs, carried[0])};
      });
  if (failed(widened))
    return loop;
  auto newLoop = cast<scf::ForOp>(widened->getOperation());
  // The old accumulator now stays zero: the canonicalizer drops it.
  rewriter.replaceOp(found.fma, newLoop.getRegionIterArgs()[found.index]);
  sumPairedLanes(rewriter, newLoop.getResult(found.index),
                 newLoop.getResults().back());
  return newLoop;
}

struct CpuUseBf16DotProductsPass
    : linnet::impl::LinnetCpuUseBf16DotProductsBase<CpuUseBf16DotProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      for (unsigned i = 0; i < loop.getNumRegionIterArgs(); ++i)
        if (std::optional<Bf16LaneProduct> found =
                matchBf16LaneProduct(loop, i))
          loop = usePairedDotProducts(rewriter, loop, *found);
    }
  }
};

} // namespace

//===- CpuSerializeSingleTileRegions.cpp - no thread team for one tile ----===//
//
// A dispatch region over a dynamic size (the rows of a call: one in a
// decode) often has a single tile at run time. Its omp.parallel gets an `if`
// clause: more than one iteration of its loop nest, or the calling thread
// runs it alone (serialized), which costs a function call instead of a
// thread team's fork and join.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUSERIALIZESINGLETILEREGIONS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The loop nest an omp.parallel work-shares, when it is the region's only
/// content (as scf → OpenMP makes it).
omp::LoopNestOp workSharedNest(omp::ParallelOp parallel) {
  omp::LoopNestOp found;
  int count = 0;
  parallel.walk([&](omp::LoopNestOp nest) {
    found = nest;
    ++count;
  });
  if (count != 1 || !found->getParentOfType<omp::WsloopOp>())
    return nullptr;
  return found;
}

struct SerializeSingleTileRegionsPass
    : linnet::impl::LinnetCpuSerializeSingleTileRegionsBase<
          SerializeSingleTileRegionsPass> {
  void runOnOperation() override {
    getOperation().walk([](omp::ParallelOp parallel) {
      if (parallel.getIfExpr())
        return;
      omp::LoopNestOp nest = workSharedNest(parallel);
      if (!nest)
        return;
      // The bounds must be computed before the region to be tested there.
      for (Value bound : nest->getOperands())
        if (Operation *def = bound.getDefiningOp();
            def && parallel->isProperAncestor(def))
          return;
      // Constant bounds are decided here: the tiling left several tiles, or
      // canonicalization would have removed the loop.
      if (llvm::all_of(nest->getOperands(), [](Value bound) {
            return getConstantIntValue(bound).has_value();
          }))
        return;
      OpBuilder b(parallel);
      Location loc = parallel.getLoc();
      Value trips = arith::ConstantIndexOp::create(b, loc, 1);
      for (auto [lower, upper, step] :
           llvm::zip_equal(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(),
                           nest.getLoopSteps())) {
        Value extent = arith::SubIOp::create(b, loc, upper, lower);
        Value count = arith::CeilDivSIOp::create(b, loc, extent, step);
        trips = arith::MulIOp::create(b, loc, trips, count);
      }
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value several =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, trips, one);
      parallel.getIfExprMutable().assign(several);
    });
  }
};

} // namespace

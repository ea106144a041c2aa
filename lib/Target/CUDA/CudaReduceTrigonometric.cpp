//===- CudaReduceTrigonometric.cpp - sin/cos of a reduced f32 argument ----===//
//
// See the pass's description in Passes.td: a sine's or cosine's argument
// reduced in f64, then the hardware's approximation, so that the op needs
// no local array and may share a kernel.
//
//===----------------------------------------------------------------------===//

#include "Libdevice.h"
#include "PassDetail.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAREDUCETRIGONOMETRIC
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// 2 pi as a double, and the double nearest what it leaves out: `x - k * 2
/// pi` by two fused multiply-adds is exact to well below an f32 ulp of the
/// result for any k an f32 angle gives.
constexpr double kTwoPiHigh = 6.283185307179586;
constexpr double kTwoPiLow = 2.4492935982947064e-16;

/// `op` (a math.sin or math.cos of f32) as the same function, with `afn`,
/// of its argument reduced to [-pi, pi] in f64.
template <typename TrigOp> void reduceArgument(TrigOp op) {
  if (!op.getType().isF32() || !linnet::isFullRangeTrigonometric(op))
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f64 = b.getF64Type();
  auto constant = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  };
  Value x = arith::ExtFOp::create(b, loc, f64, op.getOperand());
  Value turns = arith::MulFOp::create(b, loc, x, constant(1.0 / kTwoPiHigh));
  Value k = math::RoundEvenOp::create(b, loc, turns);
  Value negK = arith::NegFOp::create(b, loc, k);
  Value high = math::FmaOp::create(b, loc, negK, constant(kTwoPiHigh), x);
  Value reduced = math::FmaOp::create(b, loc, negK, constant(kTwoPiLow), high);
  Value narrow = arith::TruncFOp::create(b, loc, b.getF32Type(), reduced);
  Value result = TrigOp::create(b, loc, narrow, arith::FastMathFlags::afn);
  op.replaceAllUsesWith(result);
  op.erase();
}

struct CudaReduceTrigonometricPass
    : linnet::impl::LinnetCudaReduceTrigonometricBase<
          CudaReduceTrigonometricPass> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (auto sin = dyn_cast<math::SinOp>(op))
        reduceArgument(sin);
      else if (auto cos = dyn_cast<math::CosOp>(op))
        reduceArgument(cos);
    });
  }
};

} // namespace

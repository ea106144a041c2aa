//===- Libdevice.h - what libdevice's math functions ask of a kernel ------===//
//
// The math functions a kernel calls come from libdevice, linked into each
// kernel module; some cost registers or local memory where other code
// surrounds them, and the plan keeps such code apart.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CUDA_LIBDEVICE_H
#define LINNET_LIB_TARGET_CUDA_LIBDEVICE_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Operation.h"

namespace linnet {

/// Whether `op` is a sine, a cosine or a tangent of the full range: not
/// `afn` (linnet-cuda-reduce-trigonometric's, of an argument it reduced,
/// is `sin.approx` and needs no local array).
inline bool isFullRangeTrigonometric(mlir::Operation *op) {
  if (!mlir::isa<mlir::math::SinOp, mlir::math::CosOp, mlir::math::TanOp>(op))
    return false;
  auto fastmath = llvm::cast<mlir::arith::ArithFastMathInterface>(op);
  return !mlir::arith::bitEnumContainsAll(
      fastmath.getFastMathFlagsAttr().getValue(),
      mlir::arith::FastMathFlags::afn);
}

/// Whether `op` (or an op in it) computes a sine, a cosine or a tangent of
/// the full range. libdevice's `__nv_sinf` and `__nv_cosf` reduce a large
/// argument in a local array that ptxas keeps in registers in a kernel of
/// that loop alone, not beside other work (a rope's cos fused into the
/// rotation, or merged beside another kernel: a 32-byte stack frame): such
/// an op is a dispatch region, and a launch, of its own.
inline bool computesTrigonometric(mlir::Operation *op) {
  return op
      ->walk([](mlir::Operation *nested) {
        return isFullRangeTrigonometric(nested) ? mlir::WalkResult::interrupt()
                                                : mlir::WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace linnet

#endif // LINNET_LIB_TARGET_CUDA_LIBDEVICE_H

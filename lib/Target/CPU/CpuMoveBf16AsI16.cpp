//===- CpuMoveBf16AsI16.cpp - bf16 vectors loaded and stored as i16 -------===//
//
// After bf16 arithmetic is emulated in f32, bf16 vectors are only moved:
// loaded, stored, gathered, their masked lanes padded. On a CPU without
// AVX512-BF16, LLVM legalizes a bf16 vector op that it has to split or
// scalarize (a masked load of 16-bit lanes on AVX2, whose masked moves are
// 32- and 64-bit only) by widening the lanes to f32 and rounding them back one
// lane at a time through compiler-rt's __truncsfbf2: 30 % of a bf16 prefill.
// The same moves on i16 lanes (the bits unchanged, bitcasts around them) are
// legal or scalarized without conversions.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCPUMOVEBF16ASI16
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// `type` with i16 for bf16, where it is a vector of bf16; null otherwise.
VectorType asI16(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || !vector.getElementType().isBF16())
    return {};
  return vector.clone(IntegerType::get(type.getContext(), 16));
}

/// Rewrites one memory op whose operands or results are bf16 vectors.
void moveAsI16(Operation *op) {
  bool any = llvm::any_of(op->getOperandTypes(), asI16) ||
             llvm::any_of(op->getResultTypes(), asI16);
  if (!any)
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  for (OpOperand &operand : op->getOpOperands())
    if (VectorType type = asI16(operand.get().getType()))
      operand.set(LLVM::BitcastOp::create(b, loc, type, operand.get()));
  b.setInsertionPointAfter(op);
  for (OpResult result : op->getResults()) {
    Type bf16Type = result.getType();
    VectorType type = asI16(bf16Type);
    if (!type)
      continue;
    result.setType(type);
    auto back = LLVM::BitcastOp::create(b, loc, bf16Type, result);
    result.replaceAllUsesExcept(back, back);
  }
}

struct CpuMoveBf16AsI16Pass
    : linnet::impl::LinnetCpuMoveBf16AsI16Base<CpuMoveBf16AsI16Pass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (isa<LLVM::LoadOp, LLVM::StoreOp, LLVM::MaskedLoadOp,
              LLVM::MaskedStoreOp, LLVM::masked_gather, LLVM::masked_scatter>(
              op))
        moveAsI16(op);
    });
  }
};

} // namespace

//===- CudaLowerGridWaits.cpp - a chained kernel's waits on the GPU -------===//
//
// A grid wait (linnet.grid_wait, linnet-cuda-chain-launches) made of what
// every NVIDIA GPU since Volta has: a global counter per kernel, atomics
// and block barriers. The counter only grows: a wait is over when it
// reaches the next multiple of the grid size, so neither a later wait nor
// a later launch (which starts where the last one left it, at a multiple of
// the same grid) needs it reset. An i64 does not wrap in any run.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/IR/PatternMatch.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDALOWERGRIDWAITS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// `wait` as barrier, arrival and poll by the block's first thread, barrier.
void lowerWait(RewriterBase &rewriter, linnet::GridWaitOp wait,
               memref::GlobalOp counter) {
  Location loc = wait.getLoc();
  rewriter.setInsertionPoint(wait);
  gpu::BarrierOp::create(rewriter, loc);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value thread = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      thread, zero);
  auto arrive = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
  rewriter.setInsertionPoint(arrive.thenBlock()->getTerminator());
  Type i64 = rewriter.getI64Type();
  Value count = memref::GetGlobalOp::create(rewriter, loc, counter.getType(),
                                            counter.getSymName());
  // The counter's address, for atomics of the GPU's scope (memref's are of
  // the system's, which order against the host too and cost more).
  Value address = arith::IndexCastUIOp::create(
      rewriter, loc, i64,
      memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, count));
  Value pointer = LLVM::IntToPtrOp::create(
      rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), 1),
      address);
  Value one = arith::ConstantIntOp::create(rewriter, loc, i64, 1);
  // The barrier above ordered the block's writes before this fence, which
  // releases them with the arrival to whichever block sees the count (the
  // backend may make the atomic itself relaxed; the fences make it
  // cooperative groups' order either way).
  LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel, "device");
  Value before =
      LLVM::AtomicRMWOp::create(rewriter, loc, LLVM::AtomicBinOp::add, pointer,
                                one, LLVM::AtomicOrdering::acq_rel, "device");
  Value blocks = arith::IndexCastUIOp::create(
      rewriter, loc, i64,
      gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x));
  Value round = arith::DivUIOp::create(rewriter, loc, before, blocks);
  Value until = arith::MulIOp::create(
      rewriter, loc, arith::AddIOp::create(rewriter, loc, round, one), blocks);
  auto poll = scf::WhileOp::create(rewriter, loc, TypeRange{}, ValueRange{});
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.createBlock(&poll.getBefore());
    // An atomic load is never hoisted out of the loop, and acquires what
    // the blocks that arrived released.
    Value now = LLVM::LoadOp::create(
        rewriter, loc, i64, pointer, /*alignment=*/8, /*isVolatile=*/false,
        /*isNonTemporal=*/false, /*isInvariant=*/false,
        /*isInvariantGroup=*/false, LLVM::AtomicOrdering::acquire, "device");
    Value early = arith::CmpIOp::create(rewriter, loc,
                                        arith::CmpIPredicate::ult, now, until);
    scf::ConditionOp::create(rewriter, loc, early, ValueRange{});
    rewriter.createBlock(&poll.getAfter());
    scf::YieldOp::create(rewriter, loc);
  }
  // What the other blocks released is acquired before the block goes on.
  LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel, "device");
  rewriter.setInsertionPointAfter(arrive);
  gpu::BarrierOp::create(rewriter, loc);
  rewriter.eraseOp(wait);
}

struct CudaLowerGridWaitsPass
    : linnet::impl::LinnetCudaLowerGridWaitsBase<CudaLowerGridWaitsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    auto space =
        gpu::AddressSpaceAttr::get(&getContext(), gpu::AddressSpace::Global);
    auto type = MemRefType::get({1}, rewriter.getI64Type(),
                                MemRefLayoutAttrInterface(), space);
    WalkResult result = getOperation().walk([&](gpu::GPUFuncOp kernel) {
      SmallVector<linnet::GridWaitOp> waits;
      for (Operation &op : kernel.getBody().front())
        if (auto wait = dyn_cast<linnet::GridWaitOp>(op))
          waits.push_back(wait);
      // The op's verifier keeps a wait at the top level; every thread
      // reaches it alike where that level is one block.
      if (!waits.empty() && !kernel.getBody().hasOneBlock()) {
        kernel.emitOpError("has a grid wait that not every thread reaches "
                           "alike (its body is more than one block)");
        return WalkResult::interrupt();
      }
      if (waits.empty())
        return WalkResult::advance();
      rewriter.setInsertionPoint(kernel);
      auto zero = DenseElementsAttr::get(
          RankedTensorType::get({1}, rewriter.getI64Type()),
          rewriter.getI64IntegerAttr(0).getValue());
      auto counter = memref::GlobalOp::create(
          rewriter, kernel.getLoc(),
          (kernel.getName() + "_grid_arrivals").str(),
          rewriter.getStringAttr("public"), type, zero, /*constant=*/false,
          rewriter.getI64IntegerAttr(8));
      for (linnet::GridWaitOp wait : waits)
        lowerWait(rewriter, wait, counter);
      // Every register a thread may have: given a block size alone (its
      // `.maxntid`), ptxas holds a kernel this long to 128 registers, for
      // two blocks a multiprocessor, and spills; one resident block a
      // multiprocessor is all a chained kernel needs.
      kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      rewriter.getI32IntegerAttr(255));
      // The runtime launches as many blocks as the GPU holds at once, which
      // may be fewer than the launch's grid: the kernel may not take that
      // grid as known (LLVM would fold the grid size, the step of every
      // phase's loop and of the waits' count, to it).
      kernel.removeKnownGridSizeAttr();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

//===- CudaEmulateLaunches.cpp - the kernels, run on the host -------------===//
//
// The emulated device: the CUDA target's host plan runs on the CPU with each
// kernel in its mapped form (blocks and threads, linnet-cuda-map-dispatch-
// regions' output) executed by the host, so that everything of the GPU path
// but NVVM, ptxas and the driver is checked on a machine without a GPU.
// Blocks run in parallel (OpenMP, as on the CPU); a block runs the stretches
// of its body between barriers one after the other, each for all its
// threads in turn: what a barrier guarantees.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAEMULATELAUNCHES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Whether `op` or an op inside it reads `value`.
bool reads(Operation *op, Value value) {
  return op
      ->walk([&](Operation *nested) {
        return llvm::is_contained(nested->getOperands(), value)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

bool containsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Runs the ops of `block` that depend on the thread id `thread` once per
/// thread: each stretch of them (up to a barrier, or an op that does not
/// depend on the thread) in a loop over the `threads` threads. Barriers go;
/// a loop with barriers inside, run alike by every thread, is serialized
/// inside.
LogicalResult serializeThreads(RewriterBase &rewriter, Block &block,
                               Value thread, Value threads) {
  SmallVector<Operation *> stretch;
  auto flush = [&] {
    if (stretch.empty())
      return;
    Location loc = stretch.front()->getLoc();
    rewriter.setInsertionPoint(stretch.front());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(rewriter, loc, zero, threads, one);
    for (Operation *op : stretch)
      rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
    rewriter.replaceUsesWithIf(
        thread, loop.getInductionVar(),
        [&](OpOperand &use) { return loop->isAncestor(use.getOwner()); });
    stretch.clear();
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<gpu::BarrierOp>(op)) {
      flush();
      rewriter.eraseOp(&op);
      continue;
    }
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      flush();
      continue;
    }
    bool dependent =
        reads(&op, thread) || llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && llvm::is_contained(stretch, def);
        });
    if (!dependent) {
      flush();
      continue;
    }
    if (containsBarrier(&op)) {
      flush();
      if (op.getNumResults() != 0 || isa<scf::IfOp>(op))
        return op.emitOpError(
            "holds a barrier and depends on the thread id: the emulated "
            "device runs barriers only in code every thread runs alike");
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(serializeThreads(rewriter, nested, thread, threads)))
            return failure();
      continue;
    }
    stretch.push_back(&op);
  }
  flush();
  return success();
}

LogicalResult emulate(RewriterBase &rewriter, gpu::LaunchOp launch) {
  Location loc = launch.getLoc();
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  for (Value size : {grid.y, grid.z, block.y, block.z})
    if (!isConstantIntValue(size, 1))
      return launch.emitOpError(
          "is emulated only with a grid and a block in x alone");
  if (launch.getBody().getBlocks().size() != 1 ||
      launch.getNumPrivateAttributions() != 0)
    return launch.emitOpError(
        "is emulated only with one block of code and no private buffers");

  rewriter.setInsertionPoint(launch);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value thread = ub::PoisonOp::create(rewriter, loc, rewriter.getIndexType());
  // Blocks are independent (each writes its own tile): a parallel loop,
  // which the CPU's lowering gives to OpenMP's threads.
  auto blocks = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                        ValueRange{grid.x}, ValueRange{one});
  rewriter.setInsertionPointToStart(blocks.getBody());

  IRMapping mapping;
  gpu::KernelDim3 blockIds = launch.getBlockIds(),
                  threadIds = launch.getThreadIds(),
                  gridSize = launch.getGridSize(),
                  blockSize = launch.getBlockSize();
  mapping.map(blockIds.x, blocks.getInductionVars().front());
  mapping.map(threadIds.x, thread);
  mapping.map(gridSize.x, grid.x);
  mapping.map(blockSize.x, block.x);
  for (Value unit : {blockIds.y, blockIds.z, threadIds.y, threadIds.z})
    mapping.map(unit, zero);
  for (Value unit : {gridSize.y, gridSize.z, blockSize.y, blockSize.z})
    mapping.map(unit, one);

  // A block's workgroup buffers: host buffers of the block's iteration.
  SmallVector<Value> buffers;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    Value buffer = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
    buffers.push_back(buffer);
    mapping.map(attribution, buffer);
  }
  for (Operation &op : launch.getBody().front().without_terminator())
    rewriter.clone(op, mapping);
  for (Value buffer : buffers) {
    for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
      if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(user))
        rewriter.replaceOp(cast, buffer);
    rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
    memref::DeallocOp::create(rewriter, loc, buffer);
  }
  if (failed(serializeThreads(rewriter, *blocks.getBody(), thread, block.x)))
    return failure();
  if (!thread.use_empty())
    return launch.emitOpError(
        "reads its thread id outside the work between barriers; the "
        "emulated device cannot run it");
  rewriter.eraseOp(thread.getDefiningOp());
  rewriter.eraseOp(launch);
  return success();
}

struct CudaEmulateLaunchesPass
    : linnet::impl::LinnetCudaEmulateLaunchesBase<CudaEmulateLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches)
      if (failed(emulate(rewriter, launch)))
        return signalPassFailure();
  }
};

} // namespace

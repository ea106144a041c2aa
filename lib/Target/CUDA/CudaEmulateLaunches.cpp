//===- CudaEmulateLaunches.cpp - the kernels, run on the host -------------===//
//
// The emulated device: the CUDA target's host plan runs on the CPU with each
// kernel in its mapped form (blocks and threads, linnet-cuda-map-dispatch-
// regions' output) executed by the host, so that everything of the GPU path
// but NVVM, ptxas and the driver is checked on a machine without a GPU.
// Blocks run in parallel (OpenMP, as on the CPU); a block runs the stretches
// of its body between barriers one after the other, each for all its
// threads in turn: what a barrier guarantees. A value a thread keeps across
// a barrier (a register) is kept in a buffer of a value per thread, and a
// warp's shuffle is an exchange through a buffer between two barriers.
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

/// Whether `op` or an op inside it has an operand `reads` accepts.
bool readsAny(Operation *op, llvm::function_ref<bool(Value)> reads) {
  return op
      ->walk([&](Operation *nested) {
        return llvm::any_of(nested->getOperands(), reads)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

bool containsBarrier(Operation *op) {
  return op->walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// What serializing a block's threads made: the loops over the threads,
/// one per stretch, and the ops in them.
struct Stretches {
  SmallVector<scf::ForOp> loops;
  llvm::DenseSet<Operation *> ops;
};

/// Runs the ops of `block` that depend on the thread id `thread` once per
/// thread: each stretch of them (up to a barrier, or an op that does not
/// depend on the thread and is not pure) in a loop over the `threads`
/// threads. An op depends on the thread when it reads the thread id or a
/// value of an op that does. Barriers go; a loop with barriers inside, run
/// alike by every thread, is serialized inside.
LogicalResult serializeThreads(RewriterBase &rewriter, Block &block,
                               Value thread, Value threads,
                               Stretches &stretches) {
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
    stretches.loops.push_back(loop);
    stretch.clear();
  };
  // Every op of a stretch, the current one too, is in `stretches.ops`.
  auto dependsOnThread = [&](Value value) {
    Operation *def = value.getDefiningOp();
    return value == thread || (def && stretches.ops.contains(def));
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
    if (!readsAny(&op, dependsOnThread)) {
      // A pure op of no thread (a constant) goes above the stretch instead
      // of ending it.
      if (!stretch.empty() && isPure(&op) && op.getNumRegions() == 0) {
        rewriter.moveOpBefore(&op, stretch.front());
        continue;
      }
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
          if (failed(serializeThreads(rewriter, nested, thread, threads,
                                      stretches)))
            return failure();
      continue;
    }
    stretch.push_back(&op);
    stretches.ops.insert(&op);
  }
  flush();
  return success();
}

/// A value one stretch computes and a later one reads is a thread's
/// register kept across a barrier: here a buffer of a value per thread
/// (allocated at `bufferPoint`, freed before `freePoint`), stored where it
/// is computed and loaded, at the reading thread's index, where it is read.
LogicalResult keepAcrossBarriers(RewriterBase &rewriter,
                                 const Stretches &stretches, Value threads,
                                 Operation *bufferPoint, Operation *freePoint) {
  llvm::DenseSet<Operation *> loops;
  for (scf::ForOp loop : stretches.loops)
    loops.insert(loop);
  for (scf::ForOp loop : stretches.loops) {
    for (Operation &op : loop.getBody()->without_terminator()) {
      for (Value result : op.getResults()) {
        SmallVector<OpOperand *> outside;
        for (OpOperand &use : result.getUses())
          if (!loop->isAncestor(use.getOwner()))
            outside.push_back(&use);
        if (outside.empty())
          continue;
        Type type = result.getType();
        if (!type.isIntOrIndexOrFloat())
          return op.emitOpError("keeps a value of type ")
                 << type
                 << " across a barrier; the emulated device keeps only "
                    "scalars";
        Location loc = op.getLoc();
        rewriter.setInsertionPoint(bufferPoint);
        Value buffer = memref::AllocOp::create(
            rewriter, loc, MemRefType::get({ShapedType::kDynamic}, type),
            ValueRange{threads});
        rewriter.setInsertionPoint(freePoint);
        memref::DeallocOp::create(rewriter, loc, buffer);
        rewriter.setInsertionPointAfter(&op);
        memref::StoreOp::create(rewriter, loc, result, buffer,
                                loop.getInductionVar());
        for (OpOperand *use : outside) {
          Operation *reader = use->getOwner();
          Operation *enclosing = reader->getParentOp();
          while (enclosing && !loops.contains(enclosing))
            enclosing = enclosing->getParentOp();
          if (!enclosing)
            return reader->emitOpError(
                "reads a value of one thread's work outside the work "
                "between barriers; the emulated device cannot run it");
          rewriter.setInsertionPoint(reader);
          use->set(memref::LoadOp::create(
              rewriter, loc, buffer,
              cast<scf::ForOp>(enclosing).getInductionVar()));
        }
      }
    }
  }
  return success();
}

/// Each `gpu.shuffle` in `body` (xor, lanes within a warp) as what it means
/// between threads run in turn: every thread stores its value in a buffer
/// of the block, a barrier, each reads its partner's, a barrier (so that
/// the next exchange does not overwrite what is still to be read).
LogicalResult exchangeShuffles(RewriterBase &rewriter, Block &body,
                               Value thread, Value threads,
                               Operation *freePoint) {
  SmallVector<gpu::ShuffleOp> shuffles;
  body.walk([&](gpu::ShuffleOp shuffle) { shuffles.push_back(shuffle); });
  llvm::DenseMap<Type, Value> buffers;
  for (gpu::ShuffleOp shuffle : shuffles) {
    Location loc = shuffle.getLoc();
    if (shuffle.getMode() != gpu::ShuffleMode::XOR ||
        !isConstantIntValue(shuffle.getWidth(), 32))
      return shuffle.emitOpError(
          "is emulated only as a butterfly (xor) over a whole warp");
    Type type = shuffle.getValue().getType();
    Value &buffer = buffers[type];
    if (!buffer) {
      rewriter.setInsertionPointToStart(&body);
      buffer = memref::AllocOp::create(
          rewriter, loc, MemRefType::get({ShapedType::kDynamic}, type),
          ValueRange{threads});
      rewriter.setInsertionPoint(freePoint);
      memref::DeallocOp::create(rewriter, loc, buffer);
    }
    rewriter.setInsertionPoint(shuffle);
    memref::StoreOp::create(rewriter, loc, shuffle.getValue(), buffer, thread);
    gpu::BarrierOp::create(rewriter, loc);
    Value offset = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), shuffle.getOffset());
    Value partner = arith::XOrIOp::create(rewriter, loc, thread, offset);
    Value exchanged = memref::LoadOp::create(rewriter, loc, buffer, partner);
    gpu::BarrierOp::create(rewriter, loc);
    Value valid = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    rewriter.replaceOp(shuffle, ValueRange{exchanged, valid});
  }
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
  Block &body = *blocks.getBody();
  if (failed(exchangeShuffles(rewriter, body, thread, block.x,
                              body.getTerminator())))
    return failure();
  Stretches stretches;
  if (failed(serializeThreads(rewriter, body, thread, block.x, stretches)) ||
      failed(keepAcrossBarriers(rewriter, stretches, block.x, &body.front(),
                                body.getTerminator())))
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

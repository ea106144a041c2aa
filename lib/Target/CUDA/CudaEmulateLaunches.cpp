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
// warp's shuffle, ldmatrix or mma.sync is an exchange through buffers
// between two barriers.
//
//===----------------------------------------------------------------------===//

#include "LaunchParts.h"
#include "PassDetail.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

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
/// value of an op that does. Barriers go; a loop or a branch with barriers
/// inside, run alike by every thread, is serialized inside.
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
      // A branch on what every thread of the block sees alike (a merged
      // kernel's part, chosen by the block id) runs alike in each thread.
      auto branch = dyn_cast<scf::IfOp>(op);
      bool uniform = branch && !dependsOnThread(branch.getCondition());
      if (op.getNumResults() != 0 || (branch && !uniform))
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

/// Whether a thread's value of `type` can be kept in a buffer of a value
/// per thread: a scalar or a vector (a warp's mma fragments, its sums).
bool keepsPerThread(Type type) {
  return type.isIntOrIndexOrFloat() || isa<VectorType>(type);
}

/// A buffer of `threads` values of `type` (a value per thread), allocated
/// at the start of `body` and freed before `freePoint`.
Value bufferPerThread(RewriterBase &rewriter, Location loc, Block &body,
                      ArrayRef<int64_t> shape, Type type, Value threads,
                      Operation *freePoint) {
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<int64_t> sizes = {ShapedType::kDynamic};
  llvm::append_range(sizes, shape);
  rewriter.setInsertionPointToStart(&body);
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(sizes, type), ValueRange{threads});
  rewriter.setInsertionPoint(freePoint);
  memref::DeallocOp::create(rewriter, loc, buffer);
  return buffer;
}

/// A value one stretch computes and a later one reads is a thread's
/// register kept across a barrier: here a buffer of a value per thread
/// (allocated at the start of `body`, freed before `freePoint`), stored
/// where it is computed and loaded, at the reading thread's index, where it
/// is read.
LogicalResult keepAcrossBarriers(RewriterBase &rewriter,
                                 const Stretches &stretches, Value threads,
                                 Block &body, Operation *freePoint) {
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
        if (!keepsPerThread(type))
          return op.emitOpError("keeps a value of type ")
                 << type
                 << " across a barrier; the emulated device keeps only "
                    "scalars and vectors";
        Location loc = op.getLoc();
        Value buffer =
            bufferPerThread(rewriter, loc, body, {}, type, threads, freePoint);
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
    if (!buffer)
      buffer =
          bufferPerThread(rewriter, loc, body, {}, type, threads, freePoint);
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

/// Each `nvgpu.ldmatrix` in `body` (four 8 x 8 matrices of a 16-bit type)
/// as what it means between threads run in turn: every thread loads the row
/// of 8 elements its address names into a buffer of the block, a barrier,
/// each takes from the rows of the lanes 8 m + l / 4 of its warp (matrix
/// m) elements 2 (l % 4) + {0, 1}, or, transposed, element l / 4 of the
/// rows of the lanes 8 m + 2 (l % 4) + {0, 1}, a barrier.
LogicalResult exchangeLdMatrices(RewriterBase &rewriter, Block &body,
                                 Value thread, Value threads,
                                 Operation *freePoint) {
  SmallVector<nvgpu::LdMatrixOp> loads;
  body.walk([&](nvgpu::LdMatrixOp load) { loads.push_back(load); });
  for (nvgpu::LdMatrixOp load : loads) {
    Location loc = load.getLoc();
    auto type = cast<VectorType>(load.getRes().getType());
    if (load.getNumTiles() != 4 || type.getShape() != ArrayRef<int64_t>{4, 2} ||
        type.getElementTypeBitWidth() != 16)
      return load.emitOpError("is emulated only as four 8 x 8 matrices of a "
                              "16-bit type");
    Type element = type.getElementType();
    Value rows =
        bufferPerThread(rewriter, loc, body, {8}, element, threads, freePoint);
    rewriter.setInsertionPoint(load);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    Value row =
        vector::LoadOp::create(rewriter, loc, VectorType::get({8}, element),
                               load.getSrcMemref(), load.getIndices());
    vector::StoreOp::create(rewriter, loc, row, rows,
                            ValueRange{thread, index(0)});
    gpu::BarrierOp::create(rewriter, loc);
    Value lane = arith::RemUIOp::create(rewriter, loc, thread, index(32));
    Value firstLane = arith::SubIOp::create(rewriter, loc, thread, lane);
    Value group = arith::DivUIOp::create(rewriter, loc, lane, index(4));
    Value first = arith::MulIOp::create(
        rewriter, loc, arith::RemUIOp::create(rewriter, loc, lane, index(4)),
        index(2));
    auto add = [&](Value lhs, Value rhs) -> Value {
      return arith::AddIOp::create(rewriter, loc, lhs, rhs);
    };
    SmallVector<Value> elements;
    for (int64_t matrix = 0; matrix < 4; ++matrix)
      for (int64_t pair = 0; pair < 2; ++pair) {
        Value holder, column;
        if (load.getTranspose()) {
          holder = add(firstLane, add(index(8 * matrix + pair), first));
          column = group;
        } else {
          holder = add(firstLane, add(index(8 * matrix), group));
          column = add(first, index(pair));
        }
        elements.push_back(memref::LoadOp::create(rewriter, loc, rows,
                                                  ValueRange{holder, column}));
      }
    Value result =
        vector::FromElementsOp::create(rewriter, loc, type, elements);
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.replaceOp(load, result);
  }
  return success();
}

/// Each `nvgpu.mma.sync` in `body` (m16n8k16: A vector<4x2>, B vector<2x2>
/// of a 16-bit float, f32 sums vector<2x2>) as what it means between
/// threads run in turn: every thread stores its fragments in buffers of the
/// block, a barrier, each computes its sums from the A fragments of the
/// lanes that hold its rows and the B fragments of those that hold its
/// columns (PTX's layout: lane l holds rows l / 4 + {0, 8} of A and of the
/// sums, depths 2 (l % 4) + {0, 1, 8, 9}, column l / 4 of B and columns
/// 2 (l % 4) + {0, 1} of the sums), a barrier.
LogicalResult exchangeMmas(RewriterBase &rewriter, Block &body, Value thread,
                           Value threads, Operation *freePoint) {
  SmallVector<nvgpu::MmaSyncOp> mmas;
  body.walk([&](nvgpu::MmaSyncOp mma) { mmas.push_back(mma); });
  for (nvgpu::MmaSyncOp mma : mmas) {
    Location loc = mma.getLoc();
    auto aType = cast<VectorType>(mma.getMatrixA().getType());
    auto bType = cast<VectorType>(mma.getMatrixB().getType());
    auto sumsType = cast<VectorType>(mma.getMatrixC().getType());
    SmallVector<int64_t> shape = llvm::to_vector(
        llvm::map_range(mma.getMmaShape().getAsRange<IntegerAttr>(),
                        [](IntegerAttr size) { return size.getInt(); }));
    if (shape != ArrayRef<int64_t>{16, 8, 16} ||
        aType.getShape() != ArrayRef<int64_t>{4, 2} ||
        bType.getShape() != ArrayRef<int64_t>{2, 2} ||
        sumsType.getShape() != ArrayRef<int64_t>{2, 2} ||
        aType.getElementTypeBitWidth() != 16 ||
        !sumsType.getElementType().isF32())
      return mma.emitOpError("is emulated only as m16n8k16 with 16-bit "
                             "inputs and f32 sums");
    Value aBuffer = bufferPerThread(rewriter, loc, body, {4, 2},
                                    aType.getElementType(), threads, freePoint);
    Value bBuffer = bufferPerThread(rewriter, loc, body, {2, 2},
                                    bType.getElementType(), threads, freePoint);
    Value sumsBuffer =
        bufferPerThread(rewriter, loc, body, {2, 2}, sumsType.getElementType(),
                        threads, freePoint);
    rewriter.setInsertionPoint(mma);
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, value);
    };
    for (auto [fragment, buffer] : {std::pair{mma.getMatrixA(), aBuffer},
                                    {mma.getMatrixB(), bBuffer},
                                    {mma.getMatrixC(), sumsBuffer}}) {
      ArrayRef<int64_t> sizes = cast<VectorType>(fragment.getType()).getShape();
      for (int64_t reg = 0; reg < sizes[0]; ++reg)
        for (int64_t pair = 0; pair < sizes[1]; ++pair) {
          Value element = vector::ExtractOp::create(
              rewriter, loc, fragment, ArrayRef<int64_t>{reg, pair});
          memref::StoreOp::create(rewriter, loc, element, buffer,
                                  ValueRange{thread, index(reg), index(pair)});
        }
    }
    gpu::BarrierOp::create(rewriter, loc);
    Value lane = arith::RemUIOp::create(rewriter, loc, thread, index(32));
    Value firstLane = arith::SubIOp::create(rewriter, loc, thread, lane);
    Value group = arith::DivUIOp::create(rewriter, loc, lane, index(4));
    Value quad = arith::RemUIOp::create(rewriter, loc, lane, index(4));
    Type f32 = rewriter.getF32Type();
    SmallVector<Value> sums;
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t pair = 0; pair < 2; ++pair) {
        // Row group + 8 half, column 2 quad + pair.
        Value column = arith::AddIOp::create(
            rewriter, loc, arith::MulIOp::create(rewriter, loc, quad, index(2)),
            index(pair));
        Value start = memref::LoadOp::create(
            rewriter, loc, sumsBuffer,
            ValueRange{thread, index(half), index(pair)});
        auto depths = scf::ForOp::create(rewriter, loc, index(0), index(16),
                                         index(1), ValueRange{start});
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(depths.getBody());
        Value depth = depths.getInductionVar();
        Value eighth = arith::DivUIOp::create(rewriter, loc, depth, index(8));
        Value inEighth = arith::RemUIOp::create(rewriter, loc, depth, index(8));
        Value holderOffset =
            arith::DivUIOp::create(rewriter, loc, inEighth, index(2));
        Value element = arith::RemUIOp::create(rewriter, loc, depth, index(2));
        // The lane holding row or column `line` at this depth of A or B:
        // 4 line + inEighth / 2.
        auto holder = [&](Value line) -> Value {
          return arith::AddIOp::create(
              rewriter, loc, firstLane,
              arith::AddIOp::create(
                  rewriter, loc,
                  arith::MulIOp::create(rewriter, loc, line, index(4)),
                  holderOffset));
        };
        // A(row, depth): register half + 2 eighth.
        Value aRegister = arith::AddIOp::create(
            rewriter, loc, index(half),
            arith::MulIOp::create(rewriter, loc, eighth, index(2)));
        Value a = memref::LoadOp::create(
            rewriter, loc, aBuffer,
            ValueRange{holder(group), aRegister, element});
        // B(depth, column): register eighth.
        Value bLane = holder(column);
        Value bValue = memref::LoadOp::create(
            rewriter, loc, bBuffer, ValueRange{bLane, eighth, element});
        Value product = arith::MulFOp::create(
            rewriter, loc, arith::ExtFOp::create(rewriter, loc, f32, a),
            arith::ExtFOp::create(rewriter, loc, f32, bValue));
        Value sum = arith::AddFOp::create(rewriter, loc,
                                          depths.getRegionIterArg(0), product);
        scf::YieldOp::create(rewriter, loc, sum);
        sums.push_back(depths.getResult(0));
      }
    Value result =
        vector::FromElementsOp::create(rewriter, loc, sumsType, sums);
    gpu::BarrierOp::create(rewriter, loc);
    rewriter.replaceOp(mma, result);
  }
  return success();
}

/// Each loop in `body` that holds a barrier and carries values from one
/// iteration to the next (a warp's accumulators over the reduced depth)
/// carries them in buffers of a value per thread instead, loaded at the
/// start of an iteration and stored at its end: a loop's carried values are
/// block arguments, which the stretches of a thread cannot keep.
LogicalResult carryInBuffers(RewriterBase &rewriter, Block &body, Value thread,
                             Value threads, Operation *freePoint) {
  SmallVector<scf::ForOp> loops;
  body.walk([&](scf::ForOp loop) {
    if (loop.getNumResults() != 0 && containsBarrier(loop))
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    Location loc = loop.getLoc();
    SmallVector<Value> buffers;
    rewriter.setInsertionPoint(loop);
    for (Value init : loop.getInitArgs()) {
      Type type = init.getType();
      if (!keepsPerThread(type))
        return loop.emitOpError("carries a value of type ")
               << type
               << " past a barrier; the emulated device keeps only scalars "
                  "and vectors";
      buffers.push_back(
          bufferPerThread(rewriter, loc, body, {}, type, threads, freePoint));
      memref::StoreOp::create(rewriter, loc, init, buffers.back(), thread);
    }
    auto plain = scf::ForOp::create(rewriter, loc, loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep());
    rewriter.setInsertionPointToStart(plain.getBody());
    SmallVector<Value> arguments = {plain.getInductionVar()};
    for (Value buffer : buffers)
      arguments.push_back(
          memref::LoadOp::create(rewriter, loc, buffer, thread));
    Block *old = loop.getBody();
    Operation *yield = old->getTerminator();
    rewriter.setInsertionPoint(yield);
    for (auto [value, buffer] : llvm::zip(yield->getOperands(), buffers))
      memref::StoreOp::create(rewriter, loc, value, buffer, thread);
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(old, plain.getBody()->getTerminator(),
                               arguments);
    rewriter.setInsertionPointAfter(plain);
    SmallVector<Value> results;
    for (Value buffer : buffers)
      results.push_back(memref::LoadOp::create(rewriter, loc, buffer, thread));
    rewriter.replaceOp(loop, results);
  }
  return success();
}

/// A chained launch (linnet-cuda-chain-launches) as a launch per phase,
/// one after the other (what its grid waits mean), each of at most
/// `resident` blocks, as on a GPU that holds fewer blocks at once than the
/// largest phase has: the phases' loops then run several of their blocks
/// in one. Ops of an earlier phase that a later one uses are cloned into
/// it where they are pure (constants, the block's indices). Returns the
/// launches to emulate: `launch` itself where it has no grid wait.
FailureOr<SmallVector<gpu::LaunchOp>> splitAtGridWaits(RewriterBase &rewriter,
                                                       gpu::LaunchOp launch,
                                                       int64_t resident) {
  Block &body = launch.getBody().front();
  if (llvm::none_of(body, llvm::IsaPred<linnet::GridWaitOp>))
    return SmallVector<gpu::LaunchOp>{launch};
  if (resident <= 0)
    return launch.emitOpError("is emulated with resident-blocks=")
           << resident << "; it must be at least 1";
  SmallVector<SmallVector<Operation *>> phases(1);
  for (Operation &op : body.without_terminator()) {
    if (isa<linnet::GridWaitOp>(op))
      phases.emplace_back();
    else
      phases.back().push_back(&op);
  }
  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  Value most = arith::ConstantIndexOp::create(rewriter, loc, resident);
  Value grid =
      arith::MinUIOp::create(rewriter, loc, launch.getGridSizeX(), most);
  SmallVector<Type> workgroup = linnet::workgroupTypes(launch);
  SmallVector<gpu::LaunchOp> launches;
  for (ArrayRef<Operation *> phase : phases) {
    auto part = gpu::LaunchOp::create(
        rewriter, loc, grid, launch.getGridSizeY(), launch.getGridSizeZ(),
        launch.getBlockSizeX(), launch.getBlockSizeY(), launch.getBlockSizeZ(),
        /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange{},
        workgroup);
    IRMapping mapping;
    for (auto [from, to] : llvm::zip_equal(launch.getBody().getArguments(),
                                           part.getBody().getArguments()))
      mapping.map(from, to);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToEnd(&part.getBody().front());
    // What the phase uses of the ops before it at the top level: pure ones
    // are cloned, operands first.
    llvm::SetVector<Operation *> needed;
    std::function<void(Value)> need = [&](Value value) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != &body || llvm::is_contained(phase, def) ||
          needed.contains(def) || !isPure(def) || def->getNumRegions() != 0)
        return;
      for (Value operand : def->getOperands())
        need(operand);
      needed.insert(def);
    };
    for (Operation *op : phase)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          need(operand);
      });
    for (Operation *op : needed)
      rewriter.clone(*op, mapping);
    for (Operation *op : phase)
      rewriter.clone(*op, mapping);
    gpu::TerminatorOp::create(rewriter, loc);
    WalkResult unmapped = part.walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        if (launch.getBody().isAncestor(operand.getParentRegion()))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (unmapped.wasInterrupted())
      return launch.emitOpError(
          "uses in a phase a value an earlier phase computed that is not "
          "pure; the emulated device runs each phase as a launch of its own");
    launches.push_back(part);
  }
  rewriter.eraseOp(launch);
  return launches;
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
    // The kernel reads a workgroup buffer through a cast to the default
    // memory space, which a host buffer already is; a chained kernel's
    // phases view its one buffer of bytes (linnet-cuda-chain-launches), a
    // view in the workgroup space here made in the host's.
    SmallVector<Value> views = {buffer};
    while (!views.empty()) {
      Value view = views.pop_back_val();
      for (Operation *user : llvm::make_early_inc_range(view.getUsers())) {
        if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(user)) {
          rewriter.replaceOp(cast, view);
        } else if (auto part = dyn_cast<memref::ViewOp>(user);
                   part && part.getType().getMemorySpace()) {
          rewriter.setInsertionPoint(part);
          MemRefType type = part.getType();
          auto host = memref::ViewOp::create(
              rewriter, part.getLoc(),
              MemRefType::get(type.getShape(), type.getElementType()), view,
              part.getByteShift(), part.getSizes());
          rewriter.replaceAllUsesWith(part.getResult(), host.getResult());
          rewriter.eraseOp(part);
          views.push_back(host);
        }
      }
    }
    rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
    memref::DeallocOp::create(rewriter, loc, buffer);
  }
  Block &body = *blocks.getBody();
  if (failed(exchangeShuffles(rewriter, body, thread, block.x,
                              body.getTerminator())) ||
      failed(exchangeLdMatrices(rewriter, body, thread, block.x,
                                body.getTerminator())) ||
      failed(exchangeMmas(rewriter, body, thread, block.x,
                          body.getTerminator())) ||
      failed(carryInBuffers(rewriter, body, thread, block.x,
                            body.getTerminator())))
    return failure();
  Stretches stretches;
  if (failed(serializeThreads(rewriter, body, thread, block.x, stretches)) ||
      failed(keepAcrossBarriers(rewriter, stretches, block.x, body,
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
  using Base::Base;
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk(
        [&](gpu::LaunchOp launch) { launches.push_back(launch); });
    IRRewriter rewriter(&getContext());
    for (gpu::LaunchOp launch : launches) {
      FailureOr<SmallVector<gpu::LaunchOp>> phases =
          splitAtGridWaits(rewriter, launch, residentBlocks);
      if (failed(phases))
        return signalPassFailure();
      for (gpu::LaunchOp phase : *phases)
        if (failed(emulate(rewriter, phase)))
          return signalPassFailure();
    }
  }
};

} // namespace

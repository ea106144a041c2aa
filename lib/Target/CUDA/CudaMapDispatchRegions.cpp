//===- CudaMapDispatchRegions.cpp - dispatch regions to GPU kernels -------===//
//
// After bufferization a dispatch region is an `scf.forall` without results
// whose body computes one tile: linalg ops on subviews of the function's
// buffers. Each becomes a `gpu.launch` (gpu-kernel-outlining then makes it a
// kernel): the forall's iterations are the blocks, and inside a block each
// linalg op's parallel iterations are dealt out to its threads, one
// iteration's reduction loops in one thread. This is the first, general
// mapping: every region runs, none fast (the kernels of the special ops
// and the register tiles of the GPU come on top of it).
//
//===----------------------------------------------------------------------===//

#include "KernelNames.h"
#include "LaunchParts.h"
#include "PassDetail.h"
#include "TensorCoreAttention.h"
#include "TensorCoreMatmul.h"
#include "WarpReduction.h"
#include "WarpScan.h"

#include "linnet/Codegen/ShapeBounds.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAMAPDISPATCHREGIONS
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// ceil((ub - lb) / step) of each dimension of a loop, folded where the
/// bounds are constants (so that a merged kernel's part knows its block
/// count).
SmallVector<Value> tripCounts(OpBuilder &b, Location loc,
                              ArrayRef<OpFoldResult> lbs,
                              ArrayRef<OpFoldResult> ubs,
                              ArrayRef<OpFoldResult> steps) {
  SmallVector<Value> counts;
  for (auto [lb, ub, step] : llvm::zip_equal(lbs, ubs, steps)) {
    Value span = b.createOrFold<arith::SubIOp>(
        loc, getValueOrCreateConstantIndexOp(b, loc, ub),
        getValueOrCreateConstantIndexOp(b, loc, lb));
    counts.push_back(b.createOrFold<arith::CeilDivUIOp>(
        loc, span, getValueOrCreateConstantIndexOp(b, loc, step)));
  }
  return counts;
}

/// The product of `values`, folded where they are constants.
Value product(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  Value result = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value value : values)
    result = b.createOrFold<arith::MulIOp>(loc, result, value);
  return result;
}

/// The induction variables of a loop nest at linear iteration `linear`:
/// lb + step * (linear delinearized by the trip counts).
SmallVector<Value> inductionVariables(OpBuilder &b, Location loc, Value linear,
                                      ArrayRef<Value> counts,
                                      ArrayRef<OpFoldResult> lbs,
                                      ArrayRef<OpFoldResult> steps) {
  SmallVector<Value> indices;
  if (counts.size() == 1)
    indices.push_back(linear);
  else
    llvm::append_range(indices, affine::AffineDelinearizeIndexOp::create(
                                    b, loc, linear, ValueRange(counts),
                                    /*hasOuterBound=*/true)
                                    .getResults());
  SmallVector<Value> ivs;
  for (auto [index, lb, step] : llvm::zip_equal(indices, lbs, steps)) {
    Value scaled = arith::MulIOp::create(
        b, loc, index, getValueOrCreateConstantIndexOp(b, loc, step));
    ivs.push_back(arith::AddIOp::create(
        b, loc, scaled, getValueOrCreateConstantIndexOp(b, loc, lb)));
  }
  return ivs;
}

/// Replaces `loop` by a loop from thread `thread` in steps of `threads`
/// over the linear index of its iterations; returns that loop.
scf::ForOp dealOutToThreads(RewriterBase &rewriter, scf::ParallelOp loop,
                            Value thread, Value threads) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<OpFoldResult> lbs = getAsOpFoldResult(loop.getLowerBound()),
                            ubs = getAsOpFoldResult(loop.getUpperBound()),
                            steps = getAsOpFoldResult(loop.getStep());
  SmallVector<Value> counts = tripCounts(rewriter, loc, lbs, ubs, steps);
  Value total = product(rewriter, loc, counts);
  auto strided = scf::ForOp::create(rewriter, loc, thread, total, threads);
  rewriter.setInsertionPointToStart(strided.getBody());
  SmallVector<Value> ivs = inductionVariables(
      rewriter, loc, strided.getInductionVar(), counts, lbs, steps);
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, strided.getBody()->getTerminator(), ivs);
  rewriter.eraseOp(loop);
  return strided;
}

/// Runs `op` in thread 0 only; returns the guard.
scf::IfOp runInFirstThread(RewriterBase &rewriter, Operation *op,
                           Value thread) {
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value first =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, thread,
                            arith::ConstantIndexOp::create(rewriter, loc, 0));
  auto guard = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
  rewriter.moveOpBefore(op, guard.thenBlock()->getTerminator());
  return guard;
}

/// Whether `op` writes memory other than through the linalg ops of the
/// region (a store, a vector write).
bool writesOutsideLinalg(Operation *op) {
  if (isa<linalg::LinalgOp>(op) || op->getParentOfType<linalg::LinalgOp>())
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Write>() &&
         !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op);
}

/// `op` with its parallel loops outermost (a generic, interchanged where they
/// were not), so that its loops are one `scf.parallel` over all of them
/// around the reduction loops: every parallel iteration is a thread's.
FailureOr<linalg::LinalgOp> withParallelLoopsFirst(RewriterBase &rewriter,
                                                   linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [d, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(d);
  for (auto [d, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(d);
  if (llvm::equal(order, llvm::seq<unsigned>(0, iterators.size())))
    return op;
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return failure();
    generic = *generalized;
  }
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, generic, order);
  if (failed(interchanged))
    return failure();
  return cast<linalg::LinalgOp>(interchanged->getOperation());
}

/// The epilogue of `op` where it is a product for the tensor cores whose
/// sums go from its accumulators through their one consumer (no tile of
/// them in workgroup memory).
std::optional<linnet::TensorCoreEpilogue>
tensorCoreEpilogue(linalg::LinalgOp op, int64_t threadsPerBlock) {
  if (!linnet::matchTensorCoreMatmul(op, threadsPerBlock))
    return std::nullopt;
  return linnet::matchTensorCoreEpilogue(op);
}

/// Inside `launch`: each linalg op's parallel loop dealt out to the threads
/// (a warp reduction's outputs to the warps) and each other write run by
/// thread 0, every one followed by a barrier.
LogicalResult distributeOverThreads(RewriterBase &rewriter,
                                    gpu::LaunchOp launch,
                                    int64_t threadsPerBlock) {
  Value thread = launch.getThreadIds().x;
  Value threads = launch.getBlockSize().x;
  SmallVector<memref::CopyOp> copies;
  launch.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
  }
  SmallVector<Operation *> writes;
  SmallVector<linnet::DeltaRuleOp> scans;
  SmallVector<linnet::AttentionOp> attentions;
  launch.walk([&](Operation *op) {
    if (auto scan = dyn_cast<linnet::DeltaRuleOp>(op))
      scans.push_back(scan);
    else if (auto attention = dyn_cast<linnet::AttentionOp>(op))
      attentions.push_back(attention);
    else if (writesOutsideLinalg(op))
      writes.push_back(op);
  });
  for (Operation *write : writes) {
    scf::IfOp guard = runInFirstThread(rewriter, write, thread);
    rewriter.setInsertionPointAfter(guard);
    gpu::BarrierOp::create(rewriter, write->getLoc());
  }
  // A prompt's delta rule (kept an op through bufferization): a value
  // column 8 lanes, a window's products of keys and queries in workgroup
  // memory (WarpScan.h).
  for (linnet::DeltaRuleOp scan : scans) {
    Location loc = scan.getLoc();
    MemRefType windowType = linnet::scanWindowType(scan, threadsPerBlock);
    if (!windowType)
      return scan.emitOpError(
          "is kept for the warp scan but its tile is not of one row and head");
    Value window = launch.addWorkgroupAttribution(windowType, loc);
    rewriter.setInsertionPointAfter(scan);
    gpu::BarrierOp::create(rewriter, loc);
    if (failed(linnet::lowerDeltaRuleToWarps(rewriter, scan, thread,
                                             threadsPerBlock, window)))
      return failure();
  }
  // A prompt's attention (kept an op through bufferization): a tile of
  // queries on the tensor cores, its keys and values staged a step at a
  // time in two workgroup buffers.
  for (linnet::AttentionOp attention : attentions) {
    Location loc = attention.getLoc();
    if (!linnet::matchTensorCoreAttention(attention, threadsPerBlock))
      return attention.emitOpError(
          "is kept for the tensor cores but has no tensor-core form");
    SmallVector<Value> stages;
    for (MemRefType type : linnet::tensorCoreAttentionStageTypes(attention))
      stages.push_back(launch.addWorkgroupAttribution(type, loc));
    rewriter.setInsertionPointAfter(attention);
    gpu::BarrierOp::create(rewriter, loc);
    if (failed(linnet::lowerAttentionToTensorCores(rewriter, attention, thread,
                                                   threadsPerBlock, stages)))
      return failure();
  }
  SmallVector<linalg::LinalgOp> ops;
  launch.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  // The starts and consumers of products whose sums go straight from the
  // accumulators, and the gathers products stage (lowered with the
  // product).
  // The layouts of its tensor-core products, whose stages it sizes.
  llvm::DenseMap<Operation *, linnet::TensorCoreEpilogue> epilogues;
  llvm::SmallPtrSet<Operation *, 4> inEpilogues;
  SmallVector<linnet::TensorCoreLayout> layouts;
  for (linalg::LinalgOp op : ops) {
    if (std::optional<linnet::TensorCoreMatmul> matmul =
            linnet::matchTensorCoreMatmul(op, threadsPerBlock)) {
      layouts.push_back(linnet::tensorCoreLayout(op, *matmul, threadsPerBlock));
      // A gather of rows the product stages itself is lowered with it.
      for (OpOperand *input : op.getDpsInputOperands())
        if (std::optional<linnet::TensorCoreStagedGather> gather =
                linnet::matchTensorCoreStagedGather(op, *input))
          inEpilogues.insert(gather->op);
    }
    if (std::optional<linnet::TensorCoreEpilogue> epilogue =
            tensorCoreEpilogue(op, threadsPerBlock)) {
      epilogues[op] = *epilogue;
      inEpilogues.insert(epilogue->start);
      inEpilogues.insert(epilogue->consumer);
    }
  }
  SmallVector<Value> stages;
  for (linalg::LinalgOp original : ops) {
    if (inEpilogues.contains(original))
      continue;
    Location loc = original.getLoc();
    std::optional<linnet::TensorCoreEpilogue> epilogue;
    if (auto found = epilogues.find(original); found != epilogues.end())
      epilogue = found->second;
    FailureOr<linalg::LinalgOp> reordered =
        withParallelLoopsFirst(rewriter, original);
    if (failed(reordered))
      return original.emitOpError(
          "cannot have its parallel loops put outermost for a GPU kernel");
    linalg::LinalgOp op = *reordered;
    // A product for the tensor cores: a tile of outputs per warp, its
    // tiles staged in two workgroup buffers the launch's products share
    // (each ends at a barrier before the next begins).
    if (std::optional<linnet::TensorCoreMatmul> matmul =
            linnet::matchTensorCoreMatmul(op, threadsPerBlock)) {
      if (stages.empty())
        for (MemRefType type :
             linnet::tensorCoreStageTypes(rewriter.getContext(), layouts))
          stages.push_back(launch.addWorkgroupAttribution(type, loc));
      rewriter.setInsertionPointAfter(op);
      gpu::BarrierOp::create(rewriter, loc);
      if (failed(linnet::lowerToTensorCores(rewriter, op, *matmul, thread,
                                            threadsPerBlock, stages, epilogue)))
        return failure();
      continue;
    }
    // A warp reduction: an output per warp, its lanes sharing the reduction.
    if (std::optional<linnet::WarpReduction> reduction =
            linnet::matchWarpReduction(op, threadsPerBlock)) {
      rewriter.setInsertionPointAfter(op);
      gpu::BarrierOp::create(rewriter, loc);
      if (failed(
              linnet::lowerToWarps(rewriter, op, *reduction, thread, threads)))
        return failure();
      continue;
    }
    // An op without loops (on 0-d buffers) is one thread's scalar code.
    scf::IfOp scalar;
    if (op.getNumLoops() == 0)
      scalar = runInFirstThread(rewriter, op, thread);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, op);
    if (failed(loops))
      return op.emitOpError("cannot be lowered to loops for a GPU kernel");
    rewriter.eraseOp(op);
    if (scalar) {
      rewriter.setInsertionPointAfter(scalar);
      gpu::BarrierOp::create(rewriter, loc);
      continue;
    }
    Operation *outermost = loops->front();
    scf::ParallelOp parallel;
    outermost->walk<WalkOrder::PreOrder>([&](scf::ParallelOp found) {
      parallel = found;
      return WalkResult::interrupt();
    });
    // The barrier goes after the whole loop nest (the parallel loop may be
    // inside a reduction loop, or be the nest itself).
    Operation *nest = outermost;
    if (parallel) {
      scf::ForOp strided =
          dealOutToThreads(rewriter, parallel, thread, threads);
      if (parallel.getOperation() == outermost)
        nest = strided;
    } else {
      nest = runInFirstThread(rewriter, outermost, thread);
    }
    rewriter.setInsertionPointAfter(nest);
    gpu::BarrierOp::create(rewriter, loc);
  }
  return success();
}

/// A buffer a region allocates (the tile of a fused producer, shared by the
/// block's threads), to become workgroup memory of the block: `elements`
/// of its element type, the most its shape can hold (a partial tile's
/// extent is bounded by the tile size).
struct TileBuffer {
  Operation *allocation;
  int64_t elements;
};

/// The buffers `body` allocates, but for the sums a tensor-core product
/// keeps in registers (tensorCoreEpilogue); an error for one whose size
/// has no constant bound, which could only be a device `malloc` in every
/// thread.
FailureOr<SmallVector<TileBuffer>> collectAllocations(Operation *body,
                                                      int64_t threadsPerBlock) {
  SmallVector<TileBuffer> buffers;
  WalkResult result = body->walk([&](Operation *op) {
    if (!isa<memref::AllocOp, memref::AllocaOp>(op))
      return WalkResult::advance();
    // A product's sums that go through their consumer from registers, and
    // the rows of a product's input it stages from where they lie.
    if (llvm::any_of(op->getUsers(),
                     [&](Operation *user) {
                       auto product = dyn_cast<linalg::LinalgOp>(user);
                       return product && product.getNumDpsInits() == 1 &&
                              product.getDpsInitOperand(0)->get() ==
                                  op->getResult(0) &&
                              tensorCoreEpilogue(product, threadsPerBlock);
                     }) ||
        linnet::isStagedGatherBuffer(op->getResult(0), threadsPerBlock))
      return WalkResult::advance();
    auto type = cast<MemRefType>(op->getResult(0).getType());
    std::optional<int64_t> elements;
    if (type.getLayout().isIdentity())
      elements = linnet::codegen::boundedElementCount(op->getResult(0));
    if (!elements) {
      op->emitOpError()
          << "allocates " << type
          << " inside a dispatch region with no bound on its size: a GPU "
             "kernel holds a tile's buffers in workgroup memory, and one of "
             "unbounded size would be a device malloc in every thread";
      return WalkResult::interrupt();
    }
    buffers.push_back({op, *elements});
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  return buffers;
}

/// `allocation` replaced by a view of `buffer` (workgroup memory of
/// `elements`) of its type: the same sizes, contiguous.
void replaceByWorkgroupBuffer(RewriterBase &rewriter, Operation *allocation,
                              Value buffer) {
  Location loc = allocation->getLoc();
  auto type = cast<MemRefType>(allocation->getResult(0).getType());
  auto bufferType = cast<MemRefType>(buffer.getType());
  rewriter.setInsertionPoint(allocation);
  Value generic = memref::MemorySpaceCastOp::create(
      rewriter, loc,
      MemRefType::get(bufferType.getShape(), bufferType.getElementType()),
      buffer);
  SmallVector<OpFoldResult> sizes;
  unsigned dynamic = 0;
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size)
                        ? OpFoldResult(allocation->getOperand(dynamic++))
                        : OpFoldResult(rewriter.getIndexAttr(size)));
  SmallVector<OpFoldResult> strides(sizes.size());
  OpFoldResult stride = rewriter.getIndexAttr(1);
  AffineExpr s0, s1;
  bindSymbols(rewriter.getContext(), s0, s1);
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride = affine::makeComposedFoldedAffineApply(rewriter, loc, s0 * s1,
                                                   {stride, sizes[d]});
  }
  Value view = memref::ReinterpretCastOp::create(
      rewriter, loc, type, generic, rewriter.getIndexAttr(0), sizes, strides);
  SmallVector<Operation *> deallocs;
  for (Operation *user : allocation->getUsers())
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
  for (Operation *dealloc : deallocs)
    rewriter.eraseOp(dealloc);
  rewriter.replaceOp(allocation, view);
}

/// The kernel of the `index`th region of `func`, after the kind of the
/// region's last linalg op, delta rule or attention (its root) and the Linnet
/// source line it computes, as `SparseMoe_forward_39_generic_moe_25`.
std::string regionKernelName(func::FuncOp func, unsigned index,
                             Operation *region) {
  Operation *root = nullptr;
  region->walk([&](Operation *op) {
    if (isa<linalg::LinalgOp, linnet::DeltaRuleOp, linnet::AttentionOp>(op))
      root = op;
  });
  if (!root)
    return linnet::kernelName(func, index, "", region->getLoc());
  return linnet::kernelName(func, index, root->getName().stripDialect(),
                            root->getLoc());
}

/// Makes `region` (a dispatch region on buffers, or a single linalg op
/// outside every region) a `gpu.launch` of `threadsPerBlock` threads per
/// block, outlined later as kernel `name`.
LogicalResult mapToLaunch(RewriterBase &rewriter, Operation *region,
                          int64_t threadsPerBlock, StringRef name) {
  Location loc = region->getLoc();
  auto forall = dyn_cast<scf::ForallOp>(region);
  if (forall && forall.getNumResults() != 0)
    return forall.emitOpError(
        "is still on tensors: dispatch regions are mapped after "
        "bufferization");
  FailureOr<SmallVector<TileBuffer>> allocations =
      collectAllocations(region, threadsPerBlock);
  if (failed(allocations))
    return failure();

  rewriter.setInsertionPoint(region);
  Value threads =
      arith::ConstantIndexOp::create(rewriter, loc, threadsPerBlock);
  SmallVector<Value> counts;
  SmallVector<OpFoldResult> lbs, steps;
  if (forall) {
    lbs = forall.getMixedLowerBound();
    steps = forall.getMixedStep();
    counts = tripCounts(rewriter, loc, lbs, forall.getMixedUpperBound(), steps);
  }
  Value blocks = product(rewriter, loc, counts);
  SmallVector<Type> workgroup;
  Attribute space = gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                               gpu::AddressSpace::Workgroup);
  for (const TileBuffer &buffer : *allocations) {
    auto type = cast<MemRefType>(buffer.allocation->getResult(0).getType());
    workgroup.push_back(MemRefType::get(
        {buffer.elements}, type.getElementType(), AffineMap(), space));
  }
  auto launch = linnet::createNamedLaunch(rewriter, loc, blocks, threads,
                                          workgroup, name);
  Block &body = launch.getBody().front();
  Operation *terminator = body.getTerminator();
  if (forall) {
    rewriter.setInsertionPoint(terminator);
    SmallVector<Value> ivs = inductionVariables(
        rewriter, loc, launch.getBlockIds().x, counts, lbs, steps);
    Block *tile = forall.getBody();
    rewriter.eraseOp(tile->getTerminator());
    rewriter.inlineBlockBefore(tile, terminator, ivs);
    rewriter.eraseOp(forall);
  } else {
    rewriter.moveOpBefore(region, terminator);
  }
  for (auto [buffer, attribution] :
       llvm::zip_equal(*allocations, launch.getWorkgroupAttributions()))
    replaceByWorkgroupBuffer(rewriter, buffer.allocation, attribution);
  if (failed(distributeOverThreads(rewriter, launch, threadsPerBlock)))
    return failure();
  // A kernel declaring more static shared memory than a block has without
  // opting in would compile (ptxas does not check) and fail to launch.
  std::optional<int64_t> bytes = linnet::workgroupBytes(launch);
  if (bytes && *bytes > linnet::kMaxWorkgroupBytes)
    return launch.emitOpError("of kernel `")
           << name << "` needs " << *bytes
           << " bytes of workgroup memory a block (its tiles' buffers and "
              "staged products); a block has "
           << linnet::kMaxWorkgroupBytes << " without opting in to more";
  return success();
}

struct CudaMapDispatchRegionsPass
    : linnet::impl::LinnetCudaMapDispatchRegionsBase<
          CudaMapDispatchRegionsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> regions;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ForallOp>(op)) {
        regions.push_back(op);
        return WalkResult::skip();
      }
      // A linalg op that no configuration tiled: a region of one block.
      if (isa<linalg::LinalgOp>(op)) {
        regions.push_back(op);
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    for (auto [index, region] : llvm::enumerate(regions))
      if (failed(mapToLaunch(rewriter, region, threadsPerBlock,
                             regionKernelName(func, index, region))))
        return signalPassFailure();
  }
};

} // namespace

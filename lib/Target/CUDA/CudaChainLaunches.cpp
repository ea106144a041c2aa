//===- CudaChainLaunches.cpp - dependent kernels as one launch ------------===//
//
// After linnet-cuda-merge-launches a decode layer is still a launch per
// dependent phase: a GEMV's input row must be whole before any of its
// blocks starts, so the input projections, the convolution and delta rule,
// the output projection and the mixture of experts' three steps follow one
// another, and each launch costs about 2 us before its first block runs.
// Consecutive launches of one block of host code, with nothing between them
// but host ops free of memory effects, allocations and deallocations,
// become one chained kernel: its blocks, all resident at once, run each
// phase in turn (an `scf.for` over the phase's blocks in steps of the
// grid), with a `linnet.grid_wait` between phases where a launch boundary
// was. The grid is the largest phase's; the runtime may launch fewer blocks
// (as many as the GPU holds at once), and the loops still cover every
// phase's blocks.
//
//===----------------------------------------------------------------------===//

#include "HostBuffers.h"
#include "KernelNames.h"
#include "LaunchParts.h"
#include "Libdevice.h"
#include "PassDetail.h"

#include "linnet/Dialect/Linnet/IR/LinnetOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDACHAINLAUNCHES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The offsets of `launch`'s workgroup buffers in the chained kernel's one
/// buffer of bytes (each kWorkgroupAlignment aligned), and (last) the bytes
/// they take.
SmallVector<int64_t> workgroupOffsets(gpu::LaunchOp launch) {
  SmallVector<int64_t> offsets = {0};
  for (Type type : linnet::workgroupTypes(launch))
    offsets.push_back(llvm::alignTo(
        offsets.back() +
            linnet::SharedWorkgroup::bufferBytes(cast<MemRefType>(type)),
        linnet::kWorkgroupAlignment));
  return offsets;
}

/// Launches that become one chained kernel at the last one's place, and the
/// host deallocations between them, which go after it.
struct Chain {
  SmallVector<gpu::LaunchOp> members;
  SmallVector<memref::DeallocOp> deallocations;
  llvm::SetVector<Value> parameters;

  /// Whether `launch` can be the chain's next phase: the same block size and
  /// parameters within a kernel's. Its workgroup memory is no matter: a
  /// block runs the phases one after the other, waits between them, so each
  /// phase's buffers are views of the one buffer of the kernel.
  bool accepts(gpu::LaunchOp launch, int64_t parameterLimit) const {
    if (members.empty())
      return true;
    gpu::LaunchOp first = members.front();
    if (getConstantIntValue(first.getBlockSizeX()) !=
        getConstantIntValue(launch.getBlockSizeX()))
      return false;
    return linnet::parameterBytes(parameters, linnet::parametersOf(launch)) <=
           parameterLimit;
  }

  void add(gpu::LaunchOp launch) {
    members.push_back(launch);
    parameters.insert_range(linnet::parametersOf(launch));
  }
};

/// The grid of `launch` where it is a constant (the host may still compute
/// it from constants: a merged kernel's sum of its parts' grids).
std::optional<int64_t> constantGrid(gpu::LaunchOp launch) {
  FailureOr<int64_t> blocks = ValueBoundsConstraintSet::computeConstantBound(
      presburger::BoundType::EQ, launch.getGridSizeX());
  if (failed(blocks))
    return std::nullopt;
  return *blocks;
}

/// Whether `launch` can be a phase: a mergeable launch (LaunchParts.h) of a
/// constant grid, with no full-range trigonometry (which takes a stack
/// frame beside other work, Libdevice.h), whose workgroup buffers at their
/// aligned offsets still fit a block's static shared memory.
bool isChainable(gpu::LaunchOp launch) {
  return linnet::isMergeable(launch) && constantGrid(launch) &&
         !linnet::computesTrigonometric(launch) &&
         workgroupOffsets(launch).back() <= linnet::kMaxWorkgroupBytes;
}

/// `chain`'s launches as one at the last one's place, each a phase.
void build(RewriterBase &rewriter, Chain &chain) {
  gpu::LaunchOp first = chain.members.front(), last = chain.members.back();
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(last);
  int64_t largest = 0;
  for (gpu::LaunchOp member : chain.members)
    largest = std::max(largest, *constantGrid(member));
  Value grid = arith::ConstantIndexOp::create(rewriter, loc, largest);
  int64_t bytes = 0;
  for (gpu::LaunchOp member : chain.members)
    bytes = std::max(bytes, workgroupOffsets(member).back());
  SmallVector<Type> workgroup;
  if (bytes != 0)
    workgroup.push_back(MemRefType::get(
        {bytes}, rewriter.getI8Type(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  std::string name = first.getFunction()->str() + "_then_" +
                     std::to_string(chain.members.size() - 1);
  gpu::LaunchOp chained = linnet::createNamedLaunch(
      rewriter, loc, grid, first.getBlockSizeX(), workgroup, name);
  gpu::KernelDim3 blockIds = chained.getBlockIds(),
                  gridSize = chained.getGridSize();
  for (auto [index, member] : llvm::enumerate(chain.members)) {
    rewriter.setInsertionPoint(chained.getBody().front().getTerminator());
    if (index != 0)
      linnet::GridWaitOp::create(rewriter, loc);
    // The phase's buffers, views of the kernel's bytes.
    SmallVector<Value> buffers;
    for (auto [type, offset] : llvm::zip_first(linnet::workgroupTypes(member),
                                               workgroupOffsets(member))) {
      Value shift = arith::ConstantIndexOp::create(rewriter, loc, offset);
      buffers.push_back(memref::ViewOp::create(
          rewriter, loc, type, chained.getWorkgroupAttributions().front(),
          shift, ValueRange{}));
    }
    int64_t blocks = *constantGrid(member);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, blocks);
    auto phase =
        scf::ForOp::create(rewriter, loc, blockIds.x, count, gridSize.x);
    phase->setAttr(linnet::kLaunchPartAttr, rewriter.getI64IntegerAttr(blocks));
    rewriter.setInsertionPoint(phase.getBody()->getTerminator());
    linnet::clonePartBody(rewriter, member, chained, phase.getInductionVar(),
                          count, buffers);
    // A block that runs more than one of the phase's blocks must not write
    // the next one's shared buffers while its threads still read this one's.
    if (!buffers.empty())
      gpu::BarrierOp::create(rewriter, loc);
  }
  for (gpu::LaunchOp member : chain.members)
    rewriter.eraseOp(member);
  // A buffer freed between phases is freed once the chained kernel is
  // launched, as it was after the launches that use it.
  for (memref::DeallocOp deallocation : llvm::reverse(chain.deallocations))
    rewriter.moveOpAfter(deallocation, chained);
}

/// Chains the launches of each block of host code in `func`.
void chainIn(func::FuncOp func, RewriterBase &rewriter,
             int64_t parameterLimit) {
  SmallVector<Block *> blocks;
  func.walk([&](Block *block) {
    if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
        !isa<gpu::LaunchOp>(block->getParentOp()))
      blocks.push_back(block);
  });
  for (Block *block : blocks) {
    SmallVector<Chain> chains(1);
    auto close = [&] {
      if (!chains.back().members.empty())
        chains.emplace_back();
    };
    for (Operation &op : *block) {
      Chain &chain = chains.back();
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (launch && isChainable(launch)) {
        if (!chain.accepts(launch, parameterLimit))
          close();
        chains.back().add(launch);
        continue;
      }
      if (launch || !linnet::letsLaunchesPass(op)) {
        close();
        continue;
      }
      if (auto deallocation = dyn_cast<memref::DeallocOp>(op);
          deallocation && !chain.members.empty())
        chain.deallocations.push_back(deallocation);
    }
    for (Chain &chain : chains) {
      if (chain.members.size() < 2)
        continue;
      // Only the deallocations before the last phase move.
      llvm::erase_if(chain.deallocations, [&](memref::DeallocOp deallocation) {
        return chain.members.back()->isBeforeInBlock(deallocation);
      });
      build(rewriter, chain);
    }
  }
}

struct CudaChainLaunchesPass
    : linnet::impl::LinnetCudaChainLaunchesBase<CudaChainLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        chainIn(func, rewriter, parameterBytes);
  }
};

} // namespace

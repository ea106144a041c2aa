//===- CudaMergeLaunches.cpp - independent kernels as one launch ----------===//
//
// Each launch costs a few microseconds before its first block runs, however
// little the kernel does, and a decode step's kernels are mostly little: the
// projections of one input (q, k and v; a DeltaNet's four), small gate
// computations, the copies of states. Kernels of one block of host code
// that neither read nor write what another writes become one launch: the
// parts' grids one after the other, each block running the part its id
// falls in, with the id counted from the part's first block. A launch moves
// up to an earlier one past launches it is independent of, past host ops
// free of memory effects and allocations (which it takes along where it
// uses them), and past other host code that touches nothing it touches (a
// wait, the host's reads and writes, a branch that launches kernels; the
// shared expert's projections past a mixture of experts' routed branch),
// never past a call.
//
//===----------------------------------------------------------------------===//

#include "HostBuffers.h"
#include "KernelNames.h"
#include "LaunchParts.h"
#include "Libdevice.h"
#include "PassDetail.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAMERGELAUNCHES
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::isMergeable;
using linnet::kMaxWorkgroupBytes;
using linnet::letsLaunchesPass;
using linnet::parametersOf;
using linnet::SharedWorkgroup;
using linnet::workgroupTypes;

namespace {

/// Launches that become one kernel, all at the first one's place; or, with
/// no members, host code later launches may pass only if independent of it.
struct Group {
  SmallVector<gpu::LaunchOp> members;
  linnet::LaunchAccess access;
  llvm::SetVector<Value> parameters;
  SharedWorkgroup workgroup;
  bool accepting = true;

  /// The kernel's parameter bytes: the buffers and sizes its parts take,
  /// and each part's first block and block count.
  int64_t parameterBytes(const llvm::SetVector<Value> &more) const {
    return 16 * int64_t(members.size() + 1) +
           linnet::parameterBytes(parameters, more);
  }
};

/// Adds to `moved` the ops of `anchor`'s block, between it and the launch
/// being moved, that `value` needs above `anchor`: ops free of memory
/// effects and allocations, operands first. Returns whether `value` can be
/// had there.
bool collectHoisted(Value value, Operation *anchor, DominanceInfo &dominance,
                    llvm::SetVector<Operation *> &moved) {
  if (dominance.properlyDominates(value, anchor))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != anchor->getBlock())
    return false;
  if (moved.contains(def))
    return true;
  if (def->getNumRegions() != 0 ||
      !(isMemoryEffectFree(def) || isa<memref::AllocOp>(def)))
    return false;
  for (Value operand : def->getOperands())
    if (!collectHoisted(operand, anchor, dominance, moved))
      return false;
  moved.insert(def);
  return true;
}

class LaunchMerger {
public:
  LaunchMerger(func::FuncOp func, RewriterBase &rewriter,
               bool distinctArguments)
      : func(func), rewriter(rewriter), dominance(func),
        distinctArguments(distinctArguments) {}

  void run() {
    SmallVector<Block *> blocks;
    func.walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
          !isa<gpu::LaunchOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      mergeIn(*block);
    for (Group &group : done)
      if (group.members.size() > 1)
        build(group);
  }

private:
  void mergeIn(Block &block) {
    SmallVector<Group> open;
    auto close = [&] {
      for (Group &group : open)
        done.push_back(std::move(group));
      open.clear();
    };
    for (Operation &op : llvm::make_early_inc_range(block)) {
      auto launch = dyn_cast<gpu::LaunchOp>(op);
      if (!launch) {
        if (letsLaunchesPass(op))
          continue;
        // Other host code (a wait, host reads and writes, a branch that
        // launches) stands in the way of the launches that depend on what it
        // touches, as a launch that takes no other would.
        Group obstacle;
        obstacle.access = linnet::hostAccessOf(&op);
        obstacle.accepting = false;
        if (obstacle.access.unknown)
          close();
        else
          open.push_back(std::move(obstacle));
        continue;
      }
      Group candidate;
      candidate.members.push_back(launch);
      candidate.access = linnet::accessOf(launch);
      candidate.accepting =
          isMergeable(launch) && !linnet::computesTrigonometric(launch);
      if (candidate.accepting) {
        candidate.parameters = parametersOf(launch);
        candidate.workgroup.place(workgroupTypes(launch));
      }
      Group *target = nullptr;
      llvm::SetVector<Operation *> hoisted;
      SharedWorkgroup targetWorkgroup;
      if (candidate.accepting)
        for (Group &group : llvm::reverse(open)) {
          if (linnet::dependent(candidate.access, group.access,
                                distinctArguments))
            break;
          llvm::SetVector<Operation *> needed;
          std::optional<SharedWorkgroup> workgroup = accepts(group, candidate);
          if (workgroup && canHoist(launch, group.members.front(), needed)) {
            target = &group;
            hoisted = std::move(needed);
            targetWorkgroup = std::move(*workgroup);
          }
        }
      if (!target) {
        open.push_back(std::move(candidate));
        continue;
      }
      for (Operation *op : hoisted)
        rewriter.moveOpBefore(op, target->members.front());
      target->members.push_back(launch);
      target->access.append(candidate.access);
      target->parameters.insert_range(candidate.parameters);
      target->workgroup = std::move(targetWorkgroup);
    }
    close();
  }

  /// Whether `group` can take `candidate` in (block sizes equal, shared
  /// memory and parameters within a kernel's): the group's shared buffers
  /// with the candidate's placed among them; none where it cannot.
  std::optional<SharedWorkgroup> accepts(const Group &group,
                                         const Group &candidate) const {
    if (!group.accepting)
      return std::nullopt;
    gpu::LaunchOp first = group.members.front(),
                  launch = candidate.members.front();
    SharedWorkgroup workgroup = group.workgroup;
    workgroup.place(workgroupTypes(launch));
    if (getConstantIntValue(first.getBlockSizeX()) !=
            getConstantIntValue(launch.getBlockSizeX()) ||
        workgroup.bytes() > kMaxWorkgroupBytes ||
        group.parameterBytes(candidate.parameters) >
            linnet::kMaxKernelParameterBytes)
      return std::nullopt;
    return workgroup;
  }

  /// Whether what `launch` takes from the host can be had at `anchor`,
  /// with the ops in `needed` moved there.
  bool canHoist(gpu::LaunchOp launch, Operation *anchor,
                llvm::SetVector<Operation *> &needed) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(launch.getBody(), used);
    used.insert_range(launch->getOperands());
    return llvm::all_of(used, [&](Value value) {
      return collectHoisted(value, anchor, dominance, needed);
    });
  }

  /// `group`'s launches as one at the first one's place, each part in an
  /// `scf.if` on the block id.
  void build(Group &group) {
    gpu::LaunchOp first = group.members.front();
    Location loc = first.getLoc();
    rewriter.setInsertionPoint(first);
    SmallVector<Value> starts;
    Value total;
    SharedWorkgroup workgroup;
    SmallVector<SmallVector<unsigned>> placed;
    for (gpu::LaunchOp member : group.members) {
      Value count = member.getGridSizeX();
      starts.push_back(
          total ? total
                : arith::ConstantIndexOp::create(rewriter, loc, 0).getResult());
      total =
          total ? arith::AddIOp::create(rewriter, loc, total, count).getResult()
                : count;
      placed.push_back(workgroup.place(workgroupTypes(member)));
    }
    std::string name = first.getFunction()->str() + "_and_" +
                       std::to_string(group.members.size() - 1);
    gpu::LaunchOp merged = linnet::createNamedLaunch(
        rewriter, loc, total, first.getBlockSizeX(), workgroup.types, name);
    gpu::KernelDim3 blockIds = merged.getBlockIds();
    for (auto [member, start, indices] :
         llvm::zip_equal(group.members, starts, placed)) {
      Value count = member.getGridSizeX();
      rewriter.setInsertionPoint(merged.getBody().front().getTerminator());
      Value local = arith::SubIOp::create(rewriter, loc, blockIds.x, start);
      Value inside = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, local, count);
      auto part = scf::IfOp::create(rewriter, loc, inside, /*withElse=*/false);
      std::optional<int64_t> blocks = getConstantIntValue(count);
      if (!blocks) {
        FailureOr<int64_t> bound =
            ValueBoundsConstraintSet::computeConstantBound(
                presburger::BoundType::UB, count, /*stopCondition=*/nullptr,
                /*closedUB=*/true);
        if (succeeded(bound))
          blocks = *bound;
      }
      part->setAttr(linnet::kLaunchPartAttr,
                    blocks ? Attribute(rewriter.getI64IntegerAttr(*blocks))
                           : Attribute(rewriter.getUnitAttr()));
      rewriter.setInsertionPoint(part.thenBlock()->getTerminator());
      SmallVector<Value> buffers =
          llvm::map_to_vector(indices, [&](unsigned index) -> Value {
            return merged.getWorkgroupAttributions()[index];
          });
      linnet::clonePartBody(rewriter, member, merged, local, count, buffers);
    }
    for (gpu::LaunchOp member : group.members)
      rewriter.eraseOp(member);
  }

  func::FuncOp func;
  RewriterBase &rewriter;
  DominanceInfo dominance;
  bool distinctArguments;
  SmallVector<Group> done;
};

struct CudaMergeLaunchesPass
    : linnet::impl::LinnetCudaMergeLaunchesBase<CudaMergeLaunchesPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Whether a function's arguments are distinct asks its callers: all
    // answered before any function changes.
    llvm::DenseMap<Operation *, bool> distinct =
        linnet::functionsWithDistinctArguments(getOperation());
    SmallVector<std::pair<func::FuncOp, bool>> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back({func, distinct.lookup(func)});
    for (auto [func, distinctArguments] : funcs)
      LaunchMerger(func, rewriter, distinctArguments).run();
  }
};

} // namespace

//===- CudaPlanHost.cpp - the host side of the GPU plan -------------------===//
//
// After the mapping, the host side of a function still does three things a
// GPU cannot leave to the host as they are:
// - it copies buffers (`memref.copy`, from bufferization: the states an
//   entry writes back). On a GPU those bytes are device memory, so copies
//   become kernels, one element per thread, one kernel for a run of
//   independent copies;
// - it keeps small bookkeeping arrays (the deallocation helper's pointer
//   lists) in heap buffers, which would be device allocations; those of
//   static size in a function's body become stack buffers;
// - it reads and writes buffers between launches (a bounds check reads what
//   a kernel computed). Launches are asynchronous: before the first such
//   access after a launch the host waits for the device
//   (`linnet_device_synchronize`, a runtime function), and only then.
//
//===----------------------------------------------------------------------===//

#include "HostBuffers.h"
#include "KernelNames.h"
#include "PassDetail.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCUDAPLANHOST
#include "Passes.h.inc"
} // namespace linnet

using namespace mlir;
using linnet::mayOverlap;
using linnet::rootOf;

namespace {

/// A bookkeeping array larger than this stays on the heap.
constexpr int64_t kMaxStackBytes = 64 * 1024;

bool insideLaunch(Operation *op) {
  return op->getParentOfType<gpu::LaunchOp>() != nullptr;
}

/// Whether the host may touch `value` at any time: a stack buffer, which
/// no kernel is given.
bool hostOnly(Value value) {
  return rootOf(value).getDefiningOp<memref::AllocaOp>() != nullptr;
}

// --- Copies as kernels ----------------------------------------------------

/// Whether `copy` may join `group` in one kernel, whose threads copy their
/// elements in no order: nothing one writes another reads or writes.
bool independent(ArrayRef<memref::CopyOp> group, memref::CopyOp copy,
                 bool distinctArguments) {
  return llvm::none_of(group, [&](memref::CopyOp other) {
    return mayOverlap(copy.getTarget(), other.getSource(), distinctArguments) ||
           mayOverlap(copy.getTarget(), other.getTarget(), distinctArguments) ||
           mayOverlap(other.getTarget(), copy.getSource(), distinctArguments);
  });
}

/// The bytes of a kernel parameter for `copy`'s two buffers.
int64_t parameterBytes(memref::CopyOp copy) {
  return linnet::parameterBytes(copy.getSource()) +
         linnet::parameterBytes(copy.getTarget());
}

/// The host's copies of `func` in groups: copies of one block with only
/// ops free of memory effects (views, sizes, arithmetic) or allocations
/// between them,
/// independent of each other, as many as a kernel's parameters hold. A
/// group is one kernel (the 30 conv histories a decode step writes back:
/// two launches, not 30).
SmallVector<SmallVector<memref::CopyOp>> groupCopies(func::FuncOp func,
                                                     bool distinctArguments) {
  SmallVector<SmallVector<memref::CopyOp>> groups;
  Operation *lastCopy = nullptr;
  int64_t groupBytes = 0;
  func.walk([&](memref::CopyOp copy) {
    if (insideLaunch(copy))
      return;
    bool adjacent = lastCopy && lastCopy->getBlock() == copy->getBlock();
    for (Operation *op = lastCopy; adjacent && op != copy.getOperation();
         op = op->getNextNode())
      if (op != lastCopy && !isa<memref::AllocOp>(op) &&
          (op->getNumRegions() != 0 || !isMemoryEffectFree(op)))
        adjacent = false;
    int64_t bytes = parameterBytes(copy);
    if (adjacent && groupBytes + bytes <= linnet::kMaxKernelParameterBytes &&
        independent(groups.back(), copy, distinctArguments)) {
      groups.back().push_back(copy);
      groupBytes += bytes;
    } else {
      groups.push_back({copy});
      groupBytes = bytes;
    }
    lastCopy = copy;
  });
  return groups;
}

/// The elements of `copy`'s buffers.
SmallVector<Value> copySizes(OpBuilder &b, Location loc, memref::CopyOp copy) {
  auto type = cast<MemRefType>(copy.getSource().getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(
        memref::DimOp::create(b, loc, copy.getSource(), d).getResult());
  return sizes;
}

/// `copies` (a group) as one `gpu.launch` of a thread per element,
/// `threadsPerBlock` in a block, named `name`, at the last copy: thread i
/// copies element i of them all, in the copies' order.
void copiesAsKernel(RewriterBase &rewriter, ArrayRef<memref::CopyOp> copies,
                    int64_t threadsPerBlock, StringRef name) {
  memref::CopyOp last = copies.back();
  Location loc = memref::CopyOp(copies.front()).getLoc();
  rewriter.setInsertionPoint(last);
  // Copy i's elements are threads ends[i - 1] .. ends[i] - 1.
  SmallVector<SmallVector<Value>> sizes;
  SmallVector<Value> ends;
  bool empty = true, isStatic = true;
  for (memref::CopyOp copy : copies) {
    sizes.push_back(copySizes(rewriter, loc, copy));
    auto type = cast<MemRefType>(copy.getSource().getType());
    empty &= type.hasStaticShape() && type.getNumElements() == 0;
    isStatic &= type.hasStaticShape();
    Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
    for (Value size : sizes.back())
      count = arith::MulIOp::create(rewriter, loc, count, size);
    ends.push_back(ends.empty() ? count
                                : arith::AddIOp::create(rewriter, loc,
                                                        ends.back(), count));
  }
  Value total = ends.back();
  if (empty) {
    for (memref::CopyOp copy : copies)
      rewriter.eraseOp(copy);
    return;
  }
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value threads =
      arith::ConstantIndexOp::create(rewriter, loc, threadsPerBlock);
  // A grid of no blocks is not a launch the driver takes; a static size
  // needs no guard (and the launch stays where others can join it).
  if (!isStatic) {
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                                      total, zero);
    auto guard = scf::IfOp::create(rewriter, loc, any, /*withElse=*/false);
    rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
  }
  Value blocks = arith::CeilDivUIOp::create(rewriter, loc, total, threads);
  auto launch = linnet::createNamedLaunch(rewriter, loc, blocks, threads,
                                          TypeRange{}, name);
  rewriter.setInsertionPoint(launch.getBody().front().getTerminator());
  Value first =
      arith::MulIOp::create(rewriter, loc, launch.getBlockIds().x, threads);
  Value linear =
      arith::AddIOp::create(rewriter, loc, first, launch.getThreadIds().x);
  for (auto [i, copy] : llvm::enumerate(copies)) {
    OpBuilder::InsertionGuard copyGuard(rewriter);
    Value inside = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, linear, ends[i]);
    if (i > 0)
      inside = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge,
                                linear, ends[i - 1]),
          inside);
    auto element = scf::IfOp::create(rewriter, loc, inside, /*withElse=*/false);
    rewriter.setInsertionPoint(element.thenBlock()->getTerminator());
    Value offset =
        i == 0 ? linear
               : arith::SubIOp::create(rewriter, loc, linear, ends[i - 1]);
    SmallVector<Value> indices;
    if (sizes[i].size() == 1)
      indices.push_back(offset);
    else if (sizes[i].size() > 1)
      llvm::append_range(indices,
                         affine::AffineDelinearizeIndexOp::create(
                             rewriter, loc, offset, ValueRange(sizes[i]),
                             /*hasOuterBound=*/true)
                             .getResults());
    memref::CopyOp each = copy;
    Value value =
        memref::LoadOp::create(rewriter, loc, each.getSource(), indices);
    memref::StoreOp::create(rewriter, loc, value, each.getTarget(), indices);
  }
  for (memref::CopyOp copy : copies)
    rewriter.eraseOp(copy);
}

// --- Bookkeeping on the stack ---------------------------------------------

/// Whether every use of `value` (and of its views) is the host's own: loads,
/// stores, pointer reads, a reshape's shape, its deallocation, calls of
/// functions without buffer results; never a kernel, a return or a stored
/// pointer.
bool usedByHostAlone(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (insideLaunch(user) || isa<gpu::LaunchOp, func::ReturnOp>(user))
      return false;
    if (isa<memref::LoadOp, memref::DeallocOp,
            memref::ExtractAlignedPointerAsIndexOp>(user))
      continue;
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (store.getMemRef() != value)
        return false;
      continue;
    }
    // A reshape reads its shape operand on the host, into the descriptor.
    if (auto reshape = dyn_cast<memref::ReshapeOp>(user)) {
      if (reshape.getShape() != value)
        return false;
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(user)) {
      if (llvm::any_of(call.getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return false;
      continue;
    }
    if (isa<memref::CastOp, ViewLikeOpInterface>(user)) {
      if (!llvm::all_of(user->getResults(), usedByHostAlone))
        return false;
      continue;
    }
    return false;
  }
  return true;
}

void bookkeepingOnStack(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<memref::AllocOp> allocations;
  SmallVector<memref::AllocOp> candidates;
  // In the body or a branch of it (a versioned function's), not in a loop,
  // where each iteration would take more stack, nor in a kernel.
  func.walk([&](memref::AllocOp alloc) {
    if (!insideLaunch(alloc) && !alloc->getParentOfType<LoopLikeOpInterface>())
      candidates.push_back(alloc);
  });
  for (memref::AllocOp alloc : candidates) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getElementType().isIntOrIndexOrFloat())
      continue;
    int64_t bits = type.getElementType().isIndex()
                       ? 64
                       : type.getElementType().getIntOrFloatBitWidth();
    if (type.getNumElements() * ((bits + 7) / 8) > kMaxStackBytes)
      continue;
    if (usedByHostAlone(alloc.getResult()))
      allocations.push_back(alloc);
  }
  for (memref::AllocOp alloc : allocations) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPoint(alloc);
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                  alloc.getAlignmentAttr());
  }
}

// --- Device reads in the kernels that use them ----------------------------

/// Whether the host ops after `load` and before `to` (one block) leave what
/// `load` reads as it was: launches that write none of it, and ops that
/// write no memory.
bool keepsLoadedBuffer(memref::LoadOp load, Operation *to,
                       bool distinctArguments) {
  for (Operation *op = load->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      linnet::LaunchAccess access = linnet::accessOf(launch);
      if (access.unknown || llvm::any_of(access.written, [&](Value written) {
            return mayOverlap(written, load.getMemRef(), distinctArguments);
          }))
        return false;
      continue;
    }
    if (op->getNumRegions() != 0)
      return false;
    if (!isMemoryEffectFree(op) && !isa<memref::AllocOp, memref::AllocaOp,
                                        memref::DeallocOp, memref::LoadOp>(op))
      return false;
  }
  return true;
}

/// A host load of device memory (the position a decode step is given)
/// whose value reaches, through ops free of memory effects in its block (an
/// index cast, a subview of the attention cache), only kernels: each of
/// them loads it instead, so the host neither reads device memory nor waits
/// for the device there. Only where nothing between the load and a kernel
/// using it may write what it reads, the kernel included.
void sinkDeviceReads(RewriterBase &rewriter, func::FuncOp func,
                     bool distinctArguments) {
  SmallVector<memref::LoadOp> loads;
  func.walk([&](memref::LoadOp load) {
    if (!insideLaunch(load) && !hostOnly(load.getMemRef()))
      loads.push_back(load);
  });
  for (memref::LoadOp load : loads) {
    llvm::SetVector<Operation *> slice;
    slice.insert(load);
    llvm::SetVector<gpu::LaunchOp> kernels;
    bool sinkable = true;
    for (unsigned i = 0; i < slice.size() && sinkable; ++i)
      for (Operation *user : slice[i]->getUsers()) {
        if (auto launch = user->getParentOfType<gpu::LaunchOp>()) {
          kernels.insert(launch);
          continue;
        }
        if (!isa<gpu::LaunchOp>(user) && user->getBlock() == load->getBlock() &&
            user->getNumRegions() == 0 && isMemoryEffectFree(user)) {
          slice.insert(user);
          continue;
        }
        sinkable = false;
        break;
      }
    if (!sinkable || kernels.empty() ||
        llvm::any_of(kernels, [&](gpu::LaunchOp launch) {
          return launch->getBlock() != load->getBlock();
        }))
      continue;
    // Up to the last kernel using it, that one included.
    gpu::LaunchOp last =
        *llvm::max_element(kernels, [](gpu::LaunchOp a, gpu::LaunchOp b) {
          return a->isBeforeInBlock(b);
        });
    if (!keepsLoadedBuffer(load, last->getNextNode(), distinctArguments))
      continue;
    SmallVector<Operation *> ordered(slice.begin(), slice.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (gpu::LaunchOp launch : kernels) {
      IRMapping mapping;
      rewriter.setInsertionPointToStart(&launch.getBody().front());
      for (Operation *op : ordered) {
        Operation *copy = rewriter.clone(*op, mapping);
        for (auto [from, to] :
             llvm::zip_equal(op->getResults(), copy->getResults()))
          rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
            return launch->isProperAncestor(use.getOwner());
          });
      }
    }
    for (Operation *op : llvm::reverse(ordered))
      rewriter.eraseOp(op);
  }
}

// --- Waiting for the device -----------------------------------------------

/// Places the waits of one module: which functions launch kernels (or call
/// one that does), and where the host first touches device memory after a
/// launch.
class SynchronizationPlan {
public:
  explicit SynchronizationPlan(ModuleOp module) : module(module) {
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (func->walk([](gpu::LaunchOp) { return WalkResult::interrupt(); })
              .wasInterrupted())
        launchers.insert(func.getSymNameAttr());
    // Callers of launchers launch too.
    for (bool changed = true; changed;) {
      changed = false;
      for (func::FuncOp func : funcs)
        if (!launchers.contains(func.getSymNameAttr()) && callsLauncher(func)) {
          launchers.insert(func.getSymNameAttr());
          changed = true;
        }
    }
  }

  /// Inserts the waits of `func`. A function that launches starts not knowing
  /// what its caller left running; one that does not is only called with
  /// device buffers after a wait (below).
  void place(func::FuncOp func) {
    if (func.isExternal())
      return;
    placeInRegion(func.getBody(), launchers.contains(func.getSymNameAttr()));
  }

private:
  bool isLauncherCall(Operation *op) const {
    auto call = dyn_cast<func::CallOp>(op);
    return call && launchers.contains(call.getCalleeAttr().getAttr());
  }

  bool callsLauncher(Operation *op) const {
    return op
        ->walk([&](func::CallOp call) {
          return isLauncherCall(call) ? WalkResult::interrupt()
                                      : WalkResult::advance();
        })
        .wasInterrupted();
  }

  bool launches(Operation *op) const {
    return op
        ->walk([&](Operation *nested) {
          return isa<gpu::LaunchOp>(nested) || isLauncherCall(nested)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Whether `op` itself reads or writes a buffer a kernel may use.
  static bool touchesDevice(Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op))
      return llvm::any_of(call.getOperands(), [](Value operand) {
        return isa<BaseMemRefType>(operand.getType()) && !hostOnly(operand);
      });
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->getNumRegions() == 0 &&
             llvm::any_of(op->getOperands(), [](Value operand) {
               return isa<BaseMemRefType>(operand.getType()) &&
                      !hostOnly(operand);
             });
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    return llvm::any_of(instances, [](MemoryEffects::EffectInstance &effect) {
      if (!isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect()))
        return false;
      Value value = effect.getValue();
      return !value ||
             (isa<BaseMemRefType>(value.getType()) && !hostOnly(value));
    });
  }

  static bool anyTouchesDevice(Operation *op) {
    return op
        ->walk([](Operation *nested) {
          return touchesDevice(nested) ? WalkResult::interrupt()
                                       : WalkResult::advance();
        })
        .wasInterrupted();
  }

  void synchronizeBefore(Operation *op) {
    OpBuilder builder(op);
    func::CallOp::create(builder, op->getLoc(), linnet::kDeviceSynchronize,
                         TypeRange{});
    needsDeclaration = true;
  }

  /// Returns whether a launch may still be running when `region` ends.
  bool placeInRegion(Region &region, bool running) {
    bool end = running;
    for (Block &block : region) {
      bool pending = running;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (isa<gpu::LaunchOp>(op) || isLauncherCall(&op)) {
          pending = true;
          continue;
        }
        if (op.getNumRegions() && launches(&op)) {
          // A loop's body may run after its own launches.
          bool loop = isa<LoopLikeOpInterface>(op);
          for (Region &nested : op.getRegions())
            placeInRegion(nested, pending || loop);
          pending = true;
          continue;
        }
        if (pending &&
            (op.getNumRegions() ? anyTouchesDevice(&op) : touchesDevice(&op))) {
          synchronizeBefore(&op);
          pending = false;
        }
      }
      end = end || pending;
    }
    return end;
  }

public:
  bool needsDeclaration = false;

private:
  ModuleOp module;
  llvm::DenseSet<StringAttr> launchers;
};

struct CudaPlanHostPass
    : linnet::impl::LinnetCudaPlanHostBase<CudaPlanHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // Whether a function's arguments are distinct asks its callers: all
    // answered before any function changes.
    llvm::DenseMap<Operation *, bool> distinct =
        linnet::functionsWithDistinctArguments(module);
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      SmallVector<SmallVector<memref::CopyOp>> groups =
          groupCopies(func, distinct[func]);
      // Copy kernels are numbered on from the function's mapped regions.
      unsigned mapped = 0;
      func.walk([&](gpu::LaunchOp) { ++mapped; });
      for (auto [index, group] : llvm::enumerate(groups))
        copiesAsKernel(rewriter, group, threadsPerBlock,
                       linnet::kernelName(func, mapped + index, "copy",
                                          group.front().getLoc()));
      bookkeepingOnStack(rewriter, func);
      sinkDeviceReads(rewriter, func, distinct[func]);
    }
    if (!synchronize)
      return;
    SynchronizationPlan plan(module);
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      plan.place(func);
    if (plan.needsDeclaration &&
        !module.lookupSymbol(linnet::kDeviceSynchronize)) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      auto declaration = func::FuncOp::create(
          builder, module.getLoc(), linnet::kDeviceSynchronize,
          builder.getFunctionType(TypeRange{}, TypeRange{}));
      declaration.setPrivate();
    }
  }
};

} // namespace

//===- HostBuffers.cpp - which buffers the host's operations share --------===//

#include "HostBuffers.h"
#include "KernelNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <functional>

using namespace mlir;

Value linnet::viewSourceOf(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return {};
  if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(def))
    return cast.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return view.getViewSource();
  if (auto cast = dyn_cast<memref::CastOp>(def))
    return cast.getSource();
  if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
    return metadata.getSource();
  return {};
}

Value linnet::rootOf(Value value) {
  while (Value source = viewSourceOf(value))
    value = source;
  return value;
}

/// Whether `root` is a buffer of its own: an allocation.
static bool isAllocation(Value root) {
  return root.getDefiningOp<memref::AllocOp>() ||
         root.getDefiningOp<memref::AllocaOp>();
}

/// Whether `root` is an argument of its function (not a loop's carried
/// buffer, which may be any buffer).
static bool isFunctionArgument(Value root) {
  auto argument = dyn_cast<BlockArgument>(root);
  return argument && argument.getOwner()->isEntryBlock() &&
         isa<FunctionOpInterface>(argument.getOwner()->getParentOp());
}

/// Whether `value` is defined before `op` runs: in `op`'s block or one
/// around it, ahead of `op` (or of the op holding it).
static bool definedBefore(Value value, Operation *op) {
  Block *block = value.getParentBlock();
  Operation *holder = block->findAncestorOpInBlock(*op);
  if (!holder)
    return false;
  Operation *def = value.getDefiningOp();
  return !def || def->isBeforeInBlock(holder);
}

static FailureOr<Value> rootAcrossCalls(Value value);

/// Adds to `leaves` the buffers the callee whose body holds `root` (a
/// buffer's root) makes itself that `root` may be: an allocation, a call's
/// own result, or those of each value a branch or loop may yield for it
/// (the deallocation's clone of a buffer it does not own, a loop's new state
/// each iteration). False where it may be any other (an argument).
static bool collectOwnBuffers(Value root, llvm::SmallPtrSetImpl<Value> &leaves,
                              unsigned depth = 0);

/// The op that made `root` a buffer of its own: its allocation, or a call
/// whose callee returns a buffer it allocated (for this result alone, as
/// rootAcrossCalls tells); null for any other root.
static Operation *creatorOf(Value root) {
  if (isAllocation(root))
    return root.getDefiningOp();
  auto call = root.getDefiningOp<func::CallOp>();
  if (!call)
    return nullptr;
  FailureOr<Value> own = rootAcrossCalls(root);
  return succeeded(own) && *own == root ? call.getOperation() : nullptr;
}

bool linnet::mayOverlap(Value a, Value b, bool distinctArguments) {
  Value rootA = rootOf(a), rootB = rootOf(b);
  if (rootA != rootB) {
    // A buffer made by an allocation (or by a call, its callee's) is none of
    // the buffers there were before it, which are still in use where
    // anything uses both (a buffer freed before it was allocated is no
    // longer read or written; the plan, when it moves an allocation, moves
    // it up). Two results of one call are two buffers of the callee's.
    Operation *madeA = creatorOf(rootA), *madeB = creatorOf(rootB);
    auto isFresh = [](Operation *made, Value other) {
      return made && definedBefore(other, made);
    };
    if (isFresh(madeA, rootB) || isFresh(madeB, rootA) ||
        (madeA && madeA == madeB))
      return false;
    // Another call's or a branch's buffer result may be a view of anything.
    if (madeA || madeB)
      return !(madeA || isFunctionArgument(rootA)) ||
             !(madeB || isFunctionArgument(rootB));
    return !isFunctionArgument(rootA) || !isFunctionArgument(rootB) ||
           !distinctArguments;
  }
  auto viewA = a.getDefiningOp<memref::SubViewOp>();
  auto viewB = b.getDefiningOp<memref::SubViewOp>();
  if (!viewA || !viewB || viewA.getSource() != viewB.getSource())
    return true;
  FailureOr<bool> overlapping = ValueBoundsConstraintSet::areOverlappingSlices(
      a.getContext(), HyperrectangularSlice(viewA),
      HyperrectangularSlice(viewB));
  return failed(overlapping) || *overlapping;
}

/// The buffer `value` is a view of, through the results of calls: a result
/// the callee returns as a view of an argument is a view of the buffer the
/// call passed; one it returns as a view of an allocation of its own (and
/// of no other result) is a buffer of its own, the result itself. Failure
/// where it cannot be told.
static FailureOr<Value> rootAcrossCalls(Value value) {
  Value root = linnet::rootOf(value);
  auto result = dyn_cast<OpResult>(root);
  auto call = result ? dyn_cast<func::CallOp>(result.getOwner()) : nullptr;
  if (!call)
    return root;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
    return failure();
  auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
  FailureOr<Value> returned =
      rootAcrossCalls(ret.getOperand(result.getResultNumber()));
  if (failed(returned))
    return failure();
  if (auto argument = dyn_cast<BlockArgument>(*returned)) {
    if (argument.getOwner() != &callee.getBody().front())
      return failure();
    return rootAcrossCalls(call.getOperand(argument.getArgNumber()));
  }
  // The callee's own buffer (an allocation, a call's own result there, or a
  // branch or loop that yields one), unless another result may be it too.
  llvm::SmallPtrSet<Value, 4> leaves;
  if (!collectOwnBuffers(*returned, leaves))
    return failure();
  for (auto [index, other] : llvm::enumerate(ret.getOperands())) {
    if (index == result.getResultNumber() ||
        !isa<BaseMemRefType>(other.getType()))
      continue;
    FailureOr<Value> otherRoot = rootAcrossCalls(other);
    if (failed(otherRoot))
      return failure();
    // An argument is none of the buffers the callee makes.
    if (auto argument = dyn_cast<BlockArgument>(*otherRoot);
        argument && argument.getOwner() == &callee.getBody().front())
      continue;
    llvm::SmallPtrSet<Value, 4> otherLeaves;
    if (!collectOwnBuffers(*otherRoot, otherLeaves) ||
        llvm::any_of(otherLeaves,
                     [&](Value leaf) { return leaves.contains(leaf); }))
      return failure();
  }
  return root;
}

static bool collectOwnBuffers(Value root, llvm::SmallPtrSetImpl<Value> &leaves,
                              unsigned depth) {
  // Deeper than any form the lowering makes (a versioned body's branch
  // around a loop, under the deallocation's clone-unless-owned branch).
  if (depth > 8)
    return false;
  if (isAllocation(root) ||
      isa_and_nonnull<func::CallOp>(root.getDefiningOp())) {
    leaves.insert(root);
    return true;
  }
  auto result = dyn_cast<OpResult>(root);
  if (!result)
    return false;
  auto leavesOf = [&](Value value) {
    FailureOr<Value> valueRoot = rootAcrossCalls(value);
    return succeeded(valueRoot) &&
           collectOwnBuffers(*valueRoot, leaves, depth + 1);
  };
  unsigned n = result.getResultNumber();
  if (auto branch = dyn_cast<scf::IfOp>(result.getOwner()))
    return !branch.getElseRegion().empty() &&
           leavesOf(branch.thenYield().getOperand(n)) &&
           leavesOf(branch.elseYield().getOperand(n));
  if (auto loop = dyn_cast<scf::ForOp>(result.getOwner())) {
    if (!leavesOf(loop.getInitArgs()[n]))
      return false;
    // Each iteration yields the buffer it was given, or one of its own.
    Value yielded = loop.getYieldedValues()[n];
    return linnet::rootOf(yielded) == loop.getRegionIterArgs()[n] ||
           leavesOf(yielded);
  }
  return false;
}

/// Whether `func`'s arguments are distinct, with the functions whose answer
/// depends on this one's (a recursion is answered no).
static bool argumentsAreDistinct(FunctionOpInterface func,
                                 const SymbolUserMap &users,
                                 llvm::SmallPtrSetImpl<Operation *> &asking) {
  if (func.isPublic())
    return true;
  if (!asking.insert(func).second)
    return false;
  for (Operation *user : users.getUsers(func)) {
    auto call = dyn_cast<CallOpInterface>(user);
    if (!call)
      return false;
    auto caller = call->getParentOfType<FunctionOpInterface>();
    llvm::SmallPtrSet<Value, 8> roots;
    bool callerArguments = false;
    for (Value operand : call.getArgOperands()) {
      if (!isa<BaseMemRefType>(operand.getType()))
        continue;
      FailureOr<Value> root = rootAcrossCalls(operand);
      if (failed(root))
        return false;
      bool callResult = isa_and_nonnull<func::CallOp>(root->getDefiningOp());
      if (!isAllocation(*root) && !isFunctionArgument(*root) && !callResult)
        return false;
      callerArguments |= isFunctionArgument(*root);
      if (!roots.insert(*root).second)
        return false;
    }
    if (callerArguments &&
        (!caller || !argumentsAreDistinct(caller, users, asking)))
      return false;
  }
  asking.erase(func);
  return true;
}

llvm::DenseMap<Operation *, bool>
linnet::functionsWithDistinctArguments(ModuleOp module) {
  // The calls of every function gathered in one walk: asking each
  // function's symbol uses walked the whole module again, a quarter of the
  // tiny model's CUDA pipeline.
  SymbolTableCollection tables;
  SymbolUserMap users(tables, module);
  llvm::DenseMap<Operation *, bool> distinct;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    llvm::SmallPtrSet<Operation *, 4> asking;
    distinct[func] = ::argumentsAreDistinct(func, users, asking);
  }
  return distinct;
}

int64_t linnet::parameterBytes(Value value) {
  if (auto type = dyn_cast<MemRefType>(value.getType()))
    return 8 * (3 + 2 * type.getRank());
  return 8;
}

int64_t linnet::parameterBytes(const llvm::SetVector<Value> &values,
                               const llvm::SetVector<Value> &more) {
  int64_t bytes = 0;
  for (Value value : values)
    bytes += parameterBytes(value);
  for (Value value : more)
    if (!values.contains(value))
      bytes += parameterBytes(value);
  return bytes;
}

/// The host's buffer (a value defined outside `launch`) that `value`, used
/// inside it, is a view of; null for the kernel's own buffers (a block's
/// workgroup buffers, an allocation inside); failure where it cannot be
/// told (a loop's carried buffer).
static FailureOr<Value> hostBufferOf(Value value, gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  while (true) {
    if (!body.isAncestor(value.getParentRegion()))
      return value;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() == &body.front())
        return Value();
      return failure();
    }
    Operation *def = value.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return Value();
    Value source = linnet::viewSourceOf(value);
    if (!source)
      return failure();
    value = source;
  }
}

void linnet::LaunchAccess::append(const LaunchAccess &other) {
  read.insert_range(other.read);
  written.insert_range(other.written);
  unknown |= other.unknown;
}

/// Notes each read and write `op`'s effects name with `note` (buffer,
/// whether written); an effect on no buffer makes `access` unknown, except
/// with `onOperands`, where one on no value is taken to be on the op's
/// memref operands (a kernel's ops touch memory through their operands:
/// nvgpu.ldmatrix declares its read of the stage so), unknown only where
/// it has none.
static void noteEffects(MemoryEffectOpInterface op,
                        linnet::LaunchAccess &access,
                        llvm::function_ref<void(Value, bool)> note,
                        bool onOperands = false) {
  SmallVector<MemoryEffects::EffectInstance> instances;
  op.getEffects(instances);
  for (MemoryEffects::EffectInstance &effect : instances) {
    bool write = isa<MemoryEffects::Write>(effect.getEffect());
    if (!write && !isa<MemoryEffects::Read>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (value && isa<BaseMemRefType>(value.getType())) {
      note(value, write);
      continue;
    }
    auto buffers = llvm::make_filter_range(op->getOperands(), [](Value v) {
      return isa<BaseMemRefType>(v.getType());
    });
    if (value || !onOperands || buffers.empty()) {
      access.unknown = true;
      continue;
    }
    for (Value buffer : buffers)
      note(buffer, write);
  }
}

linnet::LaunchAccess linnet::accessOf(gpu::LaunchOp launch) {
  LaunchAccess access;
  std::function<void(Value, bool)> note = [&](Value value, bool write) {
    // A choice between two buffers (a warp reduction's aligned view or its
    // element-wise one) touches either.
    if (auto select = value.getDefiningOp<arith::SelectOp>();
        select && launch.getBody().isAncestor(select->getParentRegion())) {
      note(select.getTrueValue(), write);
      note(select.getFalseValue(), write);
      return;
    }
    FailureOr<Value> buffer = hostBufferOf(value, launch);
    if (failed(buffer))
      access.unknown = true;
    else if (*buffer)
      (write ? access.written : access.read).insert(*buffer);
  };
  launch.getBody().walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Unknown effects (a barrier has none on buffers): whatever buffers
      // it is given, both ways.
      for (Value operand : op->getOperands())
        if (isa<BaseMemRefType>(operand.getType())) {
          note(operand, false);
          note(operand, true);
        }
      return;
    }
    noteEffects(effects, access, note, /*onOperands=*/true);
  });
  return access;
}

linnet::LaunchAccess linnet::hostAccessOf(Operation *op) {
  LaunchAccess access;
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (auto launch = dyn_cast<gpu::LaunchOp>(nested)) {
      access.append(accessOf(launch));
      return WalkResult::skip();
    }
    if (auto call = dyn_cast<func::CallOp>(nested)) {
      if (call.getCallee() != kDeviceSynchronize)
        access.unknown = true;
      return WalkResult::advance();
    }
    if (nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      access.unknown = true;
      return WalkResult::interrupt();
    }
    noteEffects(effects, access, [&](Value value, bool write) {
      (write ? access.written : access.read).insert(value);
    });
    return WalkResult::advance();
  });
  return access;
}

bool linnet::dependent(const LaunchAccess &a, const LaunchAccess &b,
                       bool distinctArguments) {
  if (a.unknown || b.unknown)
    return true;
  auto overlap = [&](const llvm::SetVector<Value> &xs,
                     const llvm::SetVector<Value> &ys) {
    return llvm::any_of(xs, [&](Value x) {
      return llvm::any_of(
          ys, [&](Value y) { return mayOverlap(x, y, distinctArguments); });
    });
  };
  return overlap(a.written, b.read) || overlap(a.written, b.written) ||
         overlap(b.written, a.read);
}

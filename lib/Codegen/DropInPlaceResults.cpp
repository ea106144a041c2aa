//===- DropInPlaceResults.cpp - states updated in their callers' buffers --===//
//
// After bufferization a block function that updates a state in place returns
// the buffer it was given. MLIR's ownership-based deallocation assumes a
// function owns what it returns and so copies such a result on every call:
// a whole KV cache per decoded token, which the runtime then copied back
// into the session's buffer. Those results carry nothing the caller does not
// have. A private function's are dropped and each caller reads the argument
// it passed instead; an entry's state results (`linnet.state`) are written
// into the state's argument where they are not already there, and dropped:
// an entry updates the session's buffers and returns its result only.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"
#include "linnet/Codegen/StateArguments.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENDROPINPLACERESULTS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// The function's only return, or null.
func::ReturnOp uniqueReturn(func::FuncOp func) {
  func::ReturnOp found;
  for (Block &block : func.getBody()) {
    auto candidate = dyn_cast<func::ReturnOp>(block.getTerminator());
    if (!candidate)
      continue;
    if (found)
      return nullptr;
    found = candidate;
  }
  return found;
}

/// `value` with the `memref.cast`s that produced it looked through.
Value throughCasts(Value value) {
  while (auto cast = value.getDefiningOp<memref::CastOp>())
    value = cast.getSource();
  return value;
}

/// For each result of `func` that is (a cast of) one of its arguments, that
/// argument's number.
DenseMap<unsigned, unsigned> resultsThatAreArguments(func::FuncOp func,
                                                     func::ReturnOp ret) {
  DenseMap<unsigned, unsigned> found;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    auto argument = dyn_cast<BlockArgument>(throughCasts(value));
    if (argument && argument.getOwner() == &func.getBody().front())
      found[index] = argument.getArgNumber();
  }
  return found;
}

/// An entry's results marked `linnet.state`, each written into the argument
/// of the same state (a copy unless it is already that buffer) and dropped.
/// Fails, naming the result, where one cannot be: the runtime reads no state
/// results, so a kept one would be written past the results it passes.
LogicalResult writeStatesIntoArguments(func::FuncOp func,
                                       RewriterBase &rewriter) {
  func::ReturnOp ret = uniqueReturn(func);
  bool anyState = false;
  for (unsigned index = 0; index < func.getNumResults(); ++index)
    anyState |=
        bool(func.getResultAttr(index, linnet::codegen::kStateAttrName));
  if (!anyState)
    return success();
  if (!ret)
    return func.emitError("an entry with state results must have one return");
  llvm::StringMap<BlockArgument> states =
      linnet::codegen::stateArgumentsByPath(func);
  llvm::BitVector dropped(func.getNumResults());
  SmallVector<Value> kept;
  rewriter.setInsertionPoint(ret);
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    BlockArgument argument =
        linnet::codegen::stateArgumentOfResult(func, index, states);
    if (func.getResultAttr(index, linnet::codegen::kStateAttrName) &&
        (!argument || argument.getType() != value.getType()))
      return func.emitError()
             << "state result " << index
             << " has no state argument of its path and type to be written "
                "into";
    if (!argument) {
      kept.push_back(value);
      continue;
    }
    dropped.set(index);
    if (throughCasts(value) != argument)
      memref::CopyOp::create(rewriter, ret.getLoc(), value, argument);
  }
  if (failed(func.eraseResults(dropped)))
    return func.emitError("cannot drop the state results");
  ret.getOperandsMutable().assign(kept);
  return success();
}

/// Drops those results of `func` and rewrites its calls; false where there
/// is nothing to drop or a use of `func` is not a call.
bool dropInPlaceResults(func::FuncOp func, ModuleOp module,
                        RewriterBase &rewriter) {
  if (func.isExternal() || func.isPublic())
    return false;
  func::ReturnOp ret = uniqueReturn(func);
  if (!ret)
    return false;
  DenseMap<unsigned, unsigned> toArgument = resultsThatAreArguments(func, ret);
  if (toArgument.empty())
    return false;
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  if (!uses)
    return false;
  SmallVector<func::CallOp> calls;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call)
      return false;
    calls.push_back(call);
  }

  llvm::BitVector dropped(func.getNumResults());
  SmallVector<Value> kept;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    if (toArgument.count(index))
      dropped.set(index);
    else
      kept.push_back(value);
  }
  if (failed(func.eraseResults(dropped)))
    return false;
  ret.getOperandsMutable().assign(kept);

  for (func::CallOp call : calls) {
    rewriter.setInsertionPoint(call);
    auto newCall =
        func::CallOp::create(rewriter, call.getLoc(), func, call.getOperands());
    SmallVector<Value> replacements;
    unsigned next = 0;
    for (OpResult result : call.getResults()) {
      auto found = toArgument.find(result.getResultNumber());
      if (found == toArgument.end()) {
        replacements.push_back(newCall.getResult(next++));
        continue;
      }
      Value argument = call.getOperand(found->second);
      if (argument.getType() != result.getType())
        argument = memref::CastOp::create(rewriter, call.getLoc(),
                                          result.getType(), argument);
      replacements.push_back(argument);
    }
    rewriter.replaceOp(call, replacements);
  }
  return true;
}

struct DropInPlaceResultsPass
    : linnet::impl::LinnetCodegenDropInPlaceResultsBase<
          DropInPlaceResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    // A caller that passed a state up from its callee returns its own
    // argument once the callee's result is gone: again until none changes.
    bool changed = true;
    while (changed) {
      changed = false;
      for (func::FuncOp func : module.getOps<func::FuncOp>())
        changed |= dropInPlaceResults(func, module, rewriter);
    }
    for (func::FuncOp func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          failed(writeStatesIntoArguments(func, rewriter)))
        return signalPassFailure();
  }
};

} // namespace

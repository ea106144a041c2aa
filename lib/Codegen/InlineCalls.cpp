//===- InlineCalls.cpp - calls that would keep kernels apart --------------===//
//
// A kernel is formed inside one function, so a call keeps the caller's
// kernels and the callee's apart (a layer's norm and the projections of its
// DeltaNet, which read the norm: two kernels, where one computing the norm
// in each block would do). Two kinds of call are inlined:
//
// - a call of a block function compiled for every shape (a mixture of
//   experts' forward, taking [B, S, H] with B and S unknown) where the shapes
//   are known (a decode step's one row, cast to the callee's dynamic type):
//   its shapes become static, what depended on them folds (the row count's
//   versions, the sorted experts' branch), and its kernels fuse with the
//   caller's (the norm before the router's GEMV, the residual sum after the
//   combination of the experts);
// - the only call of a function of static shapes (a decode layer's
//   DeltaNet or attention): inlining it duplicates no kernel.
//
// Other calls stay calls, so a body called from several places with the
// same shapes (a decode layer, 40 times) stays one set of kernels.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/SetVector.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENINLINECALLS
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Whether some operand of `call` is a cast from a more static shape.
bool passesStaticShapes(func::CallOp call) {
  return llvm::any_of(call.getOperands(), [](Value operand) {
    auto cast = operand.getDefiningOp<tensor::CastOp>();
    return cast && tensor::canFoldIntoConsumerOp(cast);
  });
}

/// Whether every tensor `function` takes or returns has a static shape (a
/// decode step's layer). A prompt's, of a run-time length, is versioned on
/// its row count (linnet-cuda-version-products) from its first tensor-core
/// product on; inlined, its callee's body would be copied into both forms.
bool hasStaticSignature(func::FuncOp function) {
  auto isStatic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return !shaped || shaped.hasStaticShape();
  };
  FunctionType type = function.getFunctionType();
  return llvm::all_of(type.getInputs(), isStatic) &&
         llvm::all_of(type.getResults(), isStatic);
}

/// Inlines `call` of `callee`; false where the inliner refuses.
bool inlineAt(func::CallOp call, func::FuncOp callee) {
  InlinerInterface interface(call.getContext());
  // Upstream's inliner's own way of placing the callee's blocks.
  InlinerConfig config;
  if (failed(inlineCall(interface, config.getCloneCallback(),
                        cast<CallOpInterface>(call.getOperation()),
                        cast<CallableOpInterface>(callee.getOperation()),
                        &callee.getBody())))
    return false;
  call.erase();
  return true;
}

/// The call of a private function with a body and a static signature that
/// nothing else in `module` refers to, not among `refused`; none if there is
/// none. The symbols' users are gathered in one walk of the module.
func::CallOp findOnlyCall(ModuleOp module,
                          const llvm::SmallPtrSetImpl<Operation *> &refused) {
  SymbolTableCollection tables;
  SymbolUserMap users(tables, module);
  for (auto callee : module.getOps<func::FuncOp>()) {
    if (!callee.isPrivate() || callee.isExternal() ||
        !hasStaticSignature(callee))
      continue;
    ArrayRef<Operation *> uses = users.getUsers(callee);
    if (uses.size() != 1)
      continue;
    auto call = dyn_cast<func::CallOp>(uses.front());
    if (call && !refused.contains(call))
      return call;
  }
  return {};
}

struct InlineCallsPass
    : linnet::impl::LinnetCodegenInlineCallsBase<InlineCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<func::CallOp, func::FuncOp>> staticCalls;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && callee.isPrivate() && !callee.isExternal() &&
          passesStaticShapes(call))
        staticCalls.push_back({call, callee});
    });
    llvm::SetVector<Operation *> inlinedCallees;
    for (auto [call, callee] : staticCalls)
      if (inlineAt(call, callee))
        inlinedCallees.insert(callee);
    // A callee no call is left to is dropped before the only calls are
    // counted (its body's calls are none).
    for (Operation *callee : inlinedCallees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        symbols.erase(callee);
    // Then each function's only call, one at a time: inlining one may leave
    // another function called once.
    llvm::SmallPtrSet<Operation *, 4> refused;
    while (func::CallOp call = findOnlyCall(module, refused)) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!inlineAt(call, callee)) {
        refused.insert(call);
        continue;
      }
      symbols.erase(callee);
    }
  }
};

} // namespace

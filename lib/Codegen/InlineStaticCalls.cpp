//===- InlineStaticCalls.cpp - shape-generic callees at static call sites -===//
//
// A block function compiled for every shape (a mixture of experts' forward,
// taking [B, S, H] with B and S unknown) called where the shapes are known
// (a decode step's one row, cast to the callee's dynamic type) is inlined
// there: its shapes become static, what depended on them folds (the row
// count's versions, the sorted experts' branch), and its kernels fuse with
// the caller's (the norm before the router's GEMV, the residual sum after the
// combination of the experts). A call whose operands are as static as the
// callee's signature is left a call, so each shape-generic body stays one.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Inliner.h"
#include "mlir/Transforms/InliningUtils.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENINLINESTATICCALLS
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

struct InlineStaticCallsPass
    : linnet::impl::LinnetCodegenInlineStaticCallsBase<InlineStaticCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    InlinerInterface interface(&getContext());
    // Upstream's inliner's own way of placing the callee's blocks.
    InlinerConfig config;
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && callee.isPrivate() && !callee.isExternal() &&
          passesStaticShapes(call))
        calls.push_back(call);
    });
    llvm::SmallPtrSet<Operation *, 4> inlinedCallees;
    for (func::CallOp call : calls) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (failed(inlineCall(interface, config.getCloneCallback(),
                            cast<CallOpInterface>(call.getOperation()),
                            cast<CallableOpInterface>(callee.getOperation()),
                            &callee.getBody())))
        continue;
      call.erase();
      inlinedCallees.insert(callee);
    }
    // A callee no call is left to is dropped.
    for (Operation *callee : inlinedCallees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee->erase();
  }
};

} // namespace

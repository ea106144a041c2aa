//===- WriteStatesInPlace.cpp - a state's new value into the state's buffer
//===//
//
// A function's new state (a result marked `linnet.state`) is computed by a
// linalg op into a destination. Elementwise fusion replaces a destination
// the op's body does not read by a `tensor.empty` (MLIR's
// RemoveOutsDependency), so the state is computed into a buffer of its own
// and copied back into the state's on every call (linnet-codegen-drop-in-
// place-results): the DeltaNet's recurrent state per layer and token. Its
// destination is made the argument of the same state again; bufferization
// then writes it in place where nothing reads the old state afterwards, and
// copies as before where something does.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"
#include "linnet/Codegen/StateArguments.h"

namespace linnet {
#define GEN_PASS_DEF_LINNETCODEGENWRITESTATESINPLACE
#include "linnet/Codegen/Passes.h.inc"
} // namespace linnet

using namespace mlir;

namespace {

/// Makes the destination of the linalg op computing `value` be `state`,
/// where the op does not read that destination.
void computeInto(Value value, BlockArgument state) {
  while (auto cast = value.getDefiningOp<tensor::CastOp>())
    value = cast.getSource();
  auto result = dyn_cast<OpResult>(value);
  auto op = result ? dyn_cast<linalg::LinalgOp>(result.getOwner()) : nullptr;
  if (!op || value.getType() != state.getType())
    return;
  OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
  if (init->get() == state || op.payloadUsesValueFromOperand(init) ||
      !init->get().getDefiningOp<tensor::EmptyOp>())
    return;
  init->set(state);
}

struct WriteStatesInPlacePass
    : linnet::impl::LinnetCodegenWriteStatesInPlaceBase<
          WriteStatesInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    llvm::StringMap<BlockArgument> states =
        linnet::codegen::stateArgumentsByPath(func);
    func.walk([&](func::ReturnOp ret) {
      for (auto [index, value] : llvm::enumerate(ret.getOperands()))
        if (BlockArgument state =
                linnet::codegen::stateArgumentOfResult(func, index, states))
          computeInto(value, state);
    });
  }
};

} // namespace

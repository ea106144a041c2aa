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
// copies as before where something does. With copy-concatenations a state
// row inserted as a concatenation (a rotated key into its cache) is copied
// in by a linalg op, so that a region computes the pieces into the state.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/Passes.h"
#include "linnet/Codegen/SliceOfView.h"
#include "linnet/Codegen/StateArguments.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// Where `value` inserts a concatenation of static shape into `state` (a
/// decode's key row into its cache; a prompt's rows, of a run-time count,
/// are left), copies the concatenation into the state's slice with an
/// element-for-element linalg.generic and inserts the copy instead.
void copyConcatenationInto(Value value, BlockArgument state) {
  auto insert = value.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || insert.getDest() != state ||
      !insert.getSourceType().hasStaticShape() ||
      !linnet::codegen::isConcatenation(insert.getSource()))
    return;
  OpBuilder b(insert);
  Location loc = insert.getLoc();
  RankedTensorType type = insert.getSourceType();
  Value slot = tensor::ExtractSliceOp::create(
      b, loc, type, state, insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  AffineMap identity = b.getMultiDimIdentityMap(type.getRank());
  auto copy = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{insert.getSource()}, ValueRange{slot},
      ArrayRef<AffineMap>{identity, identity},
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, args[0]);
      });
  insert.getSourceMutable().assign(copy.getResult(0));
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
                linnet::codegen::stateArgumentOfResult(func, index, states)) {
          computeInto(value, state);
          if (copyConcatenations)
            copyConcatenationInto(value, state);
        }
    });
  }
};

} // namespace

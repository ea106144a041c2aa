//===- StateArguments.cpp - which arguments and results are states --------===//
//
// Pairs a function's state results with the arguments they update, by the
// `linnet.state` path IR generation gives both.
//
//===----------------------------------------------------------------------===//

#include "linnet/Codegen/StateArguments.h"

using namespace mlir;

namespace linnet::codegen {

llvm::StringMap<BlockArgument> stateArgumentsByPath(func::FuncOp func) {
  llvm::StringMap<BlockArgument> states;
  for (BlockArgument argument : func.getArguments())
    if (auto path = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                      kStateAttrName))
      states[path.getValue()] = argument;
  return states;
}

BlockArgument
stateArgumentOfResult(func::FuncOp func, unsigned index,
                      const llvm::StringMap<BlockArgument> &states) {
  auto path = func.getResultAttrOfType<StringAttr>(index, kStateAttrName);
  return path ? states.lookup(path.getValue()) : BlockArgument();
}

} // namespace linnet::codegen

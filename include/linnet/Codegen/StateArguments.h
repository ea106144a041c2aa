//===- StateArguments.h - which arguments and results are states -*- C++
//-*-===//
//
// IR generation marks a function's state arguments and the results that
// are their new values with `linnet.state = "path"`. The Codegen passes
// that keep states in their buffers (linnet-codegen-write-states-in-place,
// linnet-codegen-drop-in-place-results) pair them up by that path.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_CODEGEN_STATEARGUMENTS_H
#define LINNET_CODEGEN_STATEARGUMENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringMap.h"

namespace linnet::codegen {

/// The attribute that names the state an argument or a result holds.
inline constexpr llvm::StringLiteral kStateAttrName = "linnet.state";

/// `func`'s state arguments by path.
llvm::StringMap<mlir::BlockArgument>
stateArgumentsByPath(mlir::func::FuncOp func);

/// The state argument whose new value result `index` of `func` is (the
/// argument with the same path), or null.
mlir::BlockArgument
stateArgumentOfResult(mlir::func::FuncOp func, unsigned index,
                      const llvm::StringMap<mlir::BlockArgument> &states);

} // namespace linnet::codegen

#endif // LINNET_CODEGEN_STATEARGUMENTS_H

//===- Builtins.h - The table of built-in operations ------------*- C++ -*-===//
//
// The built-in operations of Builtins.def as an enum with lookups, shared by
// the body checker and IR generation.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_BUILTINS_H
#define LINNET_SEMA_BUILTINS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace linnet {

enum class BuiltinId {
#define LINNET_BUILTIN(Id, Spelling, Parameters) Id,
#include "linnet/Sema/Builtins.def"
};

/// One parameter of a built-in.
struct BuiltinParameter {
  llvm::StringRef name;
  bool optional;
};

/// The built-in spelled `name`, if there is one.
std::optional<BuiltinId> lookupBuiltin(llvm::StringRef name);

/// How the built-in is spelled in source.
llvm::StringRef builtinSpelling(BuiltinId id);

/// Its parameters in positional order.
llvm::ArrayRef<BuiltinParameter> builtinParameters(BuiltinId id);

/// Whether it is one of the elementwise functions of one float tensor.
bool isUnaryFloatBuiltin(BuiltinId id);

} // namespace linnet

#endif // LINNET_SEMA_BUILTINS_H

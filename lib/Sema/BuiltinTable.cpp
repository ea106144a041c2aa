//===- BuiltinTable.cpp - The table of built-in operations ----------------===//
//
// Builtins.def read once into rows: the spelling, and the parameter list
// split into names with their `?` marks.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/Builtins.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <vector>

using namespace linnet;

namespace {

struct BuiltinRow {
  llvm::StringRef spelling;
  llvm::SmallVector<BuiltinParameter, 7> parameters;
  bool unaryFloat;
};

const std::vector<BuiltinRow> &rows() {
  static const std::vector<BuiltinRow> table = [] {
    struct Declared {
      llvm::StringRef spelling, parameters;
      bool unaryFloat;
    };
    const Declared declared[] = {
#define LINNET_BUILTIN(Id, Spelling, Parameters) {Spelling, Parameters, false},
#define LINNET_UNARY_FLOAT_BUILTIN(Id, Spelling) {Spelling, "x", true},
#include "linnet/Sema/Builtins.def"
    };
    std::vector<BuiltinRow> result;
    for (const Declared &each : declared) {
      BuiltinRow row{each.spelling, {}, each.unaryFloat};
      llvm::SmallVector<llvm::StringRef, 7> names;
      each.parameters.split(names, ' ', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef name : names)
        row.parameters.push_back({name.rtrim('?'), name.ends_with("?")});
      result.push_back(std::move(row));
    }
    return result;
  }();
  return table;
}

} // namespace

std::optional<BuiltinId> linnet::lookupBuiltin(llvm::StringRef name) {
  static const llvm::StringMap<BuiltinId> bySpelling = [] {
    llvm::StringMap<BuiltinId> map;
    for (size_t i = 0; i < rows().size(); ++i)
      map[rows()[i].spelling] = BuiltinId(i);
    return map;
  }();
  auto found = bySpelling.find(name);
  if (found == bySpelling.end())
    return std::nullopt;
  return found->second;
}

llvm::StringRef linnet::builtinSpelling(BuiltinId id) {
  return rows()[size_t(id)].spelling;
}

llvm::ArrayRef<BuiltinParameter> linnet::builtinParameters(BuiltinId id) {
  return rows()[size_t(id)].parameters;
}

bool linnet::isUnaryFloatBuiltin(BuiltinId id) {
  return rows()[size_t(id)].unaryFloat;
}

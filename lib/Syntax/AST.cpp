//===- AST.cpp - Source ranges of syntax-tree variants --------------------===//
//
// Variants do not share a base, so their ranges are read through visitors.
//
//===----------------------------------------------------------------------===//

#include "linnet/Syntax/AST.h"

using namespace linnet;
using namespace linnet::ast;

namespace {
template <typename T> llvm::SMRange nodeRange(const T &node) {
  if constexpr (std::is_base_of_v<Located, T>)
    return node.range;
  else
    return node.get().range; // x3::forward_ast<...>
}
template <typename Variant> llvm::SMRange variantRange(const Variant &value) {
  return boost::apply_visitor([](const auto &node) { return nodeRange(node); },
                              value);
}
} // namespace

llvm::SMRange ast::rangeOf(const Expr &expr) { return variantRange(expr); }
llvm::SMRange ast::rangeOf(const ShapeFactor &factor) {
  return variantRange(factor);
}
llvm::SMRange ast::rangeOf(const ShapeItem &item) { return variantRange(item); }
llvm::SMRange ast::rangeOf(const Type &type) { return variantRange(type); }

//===- ValueType.h - Types of values inside function bodies -----*- C++ -*-===//
//
// The body checker gives every expression a ValueType: a tensor whose sizes
// are ShapeExprs (a scalar is a tensor of rank 0), a tuple, or one of the
// compile-time values a body can name: a size (`HeadDim / 4`), an element
// type (`f32`, `T`), a list of sizes (`[B, S, *S]`), a sub-block instance or
// array, a function. Integer scalars also carry their value symbolically
// where it is known (`pos + S`), so slice lengths such as
// `pos:pos + S` come out as `S`.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_VALUETYPE_H
#define LINNET_SEMA_VALUETYPE_H

#include "linnet/Sema/Program.h"

#include <map>
#include <memory>

namespace linnet {

/// One dimension of a value's type: a size, or a `*S` spread.
struct ValueDim {
  std::optional<ShapeExpr> size;
  std::string spread;

  static ValueDim of(ShapeExpr size) { return {std::move(size), {}}; }
  bool isSpread() const { return !size.has_value(); }
  bool operator==(const ValueDim &rhs) const {
    return size == rhs.size && spread == rhs.spread;
  }
  bool operator!=(const ValueDim &rhs) const { return !(*this == rhs); }
  std::string str() const { return size ? size->str() : "*" + spread; }
};
using DimList = std::vector<ValueDim>;

/// Values of a callee's generics in the caller's terms.
struct Substitution {
  std::map<std::string, ShapeExpr> sizes;
  std::map<std::string, ElementRef> elements;
  std::map<std::string, DimList> shapes;
};

/// A sub-block as seen from its parent: the block and its generics bound to
/// the parent's expressions.
struct BlockInstance {
  const BlockDecl *block = nullptr;
  Substitution generics;
  std::string path; ///< `q_proj`, `groups`, `layer` (a loop variable)
};

struct ValueType {
  enum Kind {
    Invalid,    ///< after an error: accepted everywhere, reports nothing more
    Tensor,     ///< dims + element; rank 0 is a scalar
    Tuple,      ///< elements
    Size,       ///< a compile-time size: `value`
    Element,    ///< an element type: `element`
    SizeList,   ///< `[B, S, *S]`: dims
    Block,      ///< a sub-block instance
    BlockArray, ///< an array of sub-blocks: instance + count
    Function,   ///< a function of `instance` (or of this block) named `name`
    Builtin,    ///< a built-in operation named `name`
  } kind = Invalid;

  DimList dims;
  ElementRef element;
  /// A literal scalar takes the element type of the other operand.
  bool weak = false;
  /// The value of an integer scalar or a Size, where known symbolically.
  std::optional<ShapeExpr> value;
  std::vector<ValueType> elements;
  std::shared_ptr<BlockInstance> instance;
  std::optional<ShapeExpr> count;
  std::string name;

  static ValueType invalid() { return {}; }
  static ValueType tensor(DimList dims, ElementRef element) {
    ValueType type;
    type.kind = Tensor;
    type.dims = std::move(dims);
    type.element = std::move(element);
    return type;
  }
  static ValueType scalar(llvm::StringRef element, bool weak = false) {
    ValueType type = tensor({}, ElementRef{element.str(), false});
    type.weak = weak;
    return type;
  }
  static ValueType size(ShapeExpr value) {
    ValueType type;
    type.kind = Size;
    type.value = std::move(value);
    return type;
  }
  static ValueType tuple(std::vector<ValueType> elements) {
    ValueType type;
    type.kind = Tuple;
    type.elements = std::move(elements);
    return type;
  }

  bool isTensor() const { return kind == Tensor; }
  bool isScalar() const { return kind == Tensor && dims.empty(); }
  bool isInvalid() const { return kind == Invalid; }
  unsigned rank() const { return unsigned(dims.size()); }
  bool hasSpread() const;
};

/// `Tensor[B, S, H; T]`, `i32`, `(A, B)`, `size `S``, ...
std::string formatValueType(const ValueType &type);

/// A type as a message shows it: tensors and tuples in backticks
/// (`` `Tensor[B, H; T]` ``), everything else as a noun phrase with its
/// article (``a size `HeadDim / 4` ``, ``a block `Linear` ``).
std::string quoteValueType(const ValueType &type);

/// Where `actual` first differs from `expected`, as a clause to append to a
/// message: `; dimension 1 is `S`, expected `H``; empty when no single place
/// explains it.
std::string describeDifference(const ValueType &actual,
                               const ValueType &expected);

/// Drops the `#n` marks that keep a callee's generics apart from the
/// caller's during inference, so messages show the names as written.
std::string withoutUnknownMarks(const std::string &text);

/// Type equality as the checker means it: same kind, same element type, and
/// sizes equal as polynomials. Weak literals match any element type.
bool sameType(const ValueType &a, const ValueType &b);

/// A declared type in the caller's terms.
ValueType instantiateType(const TypeRef &type, const Substitution &subst);
ShapeExpr substituteSize(const ShapeExpr &size, const Substitution &subst);
/// A value's type with the generics of `subst` replaced (sizes, `*S`
/// spreads, Float generics), in tuples too.
ValueType substituteType(const ValueType &type, const Substitution &subst);

/// Whether a size uses values only known at run time (a slice bound such
/// as `pos`), as opposed to generics.
bool isRuntimeSize(const ShapeExpr &size);
/// Ranks of the symbols that stand for run-time integer values.
inline constexpr unsigned kRuntimeSymbolRank = 1u << 20;

} // namespace linnet

#endif // LINNET_SEMA_VALUETYPE_H

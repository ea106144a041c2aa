//===- AST.h - The syntax tree of a Linnet module ------------------*- C++
//-*-===//
//
// What the parser hands to Sema: one ModuleAST per source file, exactly as
// written (shape expressions are not normalised here, bodies are not typed).
// Every node records the source range it came from, as pointers into the
// llvm::SourceMgr buffer, so any later stage can point a caret at it.
// The nodes are Boost.Spirit X3 attributes, hence x3::variant and
// x3::forward_ast for the recursive parts.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SYNTAX_AST_H
#define LINNET_SYNTAX_AST_H

#include "llvm/Support/SMLoc.h"

#include <boost/optional.hpp>
#include <boost/spirit/home/x3/support/ast/variant.hpp>

#include <string>
#include <vector>

namespace linnet::ast {

namespace x3 = boost::spirit::x3;

/// A node's place in the source: [begin, end) in the SourceMgr's buffer.
struct Located {
  llvm::SMRange range;
};

struct Identifier : Located {
  std::string name;
};

/// Literal text as written; its value (and whether it fits in 64 bits) is
/// decided by whoever evaluates it.
struct IntegerLiteral : Located {
  std::string text;
};
struct FloatLiteral : Located {
  std::string text;
};
struct BoolLiteral : Located {
  bool value = false;
};

//===----------------------------------------------------------------------===//
// Shape expressions (in types and generic arguments)
//===----------------------------------------------------------------------===//

struct ShapeNegation;
struct ShapeSum;

using ShapeFactor =
    x3::variant<IntegerLiteral, Identifier, x3::forward_ast<ShapeNegation>,
                x3::forward_ast<ShapeSum>>;

struct ShapeProductTail {
  char op = '*'; ///< '*' or '/'
  ShapeFactor operand;
};
struct ShapeProduct : Located {
  ShapeFactor first;
  std::vector<ShapeProductTail> rest;
};

struct ShapeSumTail {
  char op = '+'; ///< '+' or '-'
  ShapeProduct operand;
};
/// A whole shape expression: products joined by `+` and `-`.
struct ShapeSum : Located {
  ShapeProduct first;
  std::vector<ShapeSumTail> rest;
};

struct ShapeNegation : Located {
  ShapeFactor operand;
};

/// `*S`: a Shape generic spread into a dimension or generic argument list.
struct ShapeSpread : Located {
  Identifier name;
};

/// One entry of a dimension list or a generic argument list.
using ShapeItem = x3::variant<ShapeSpread, ShapeSum>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// `Tensor[d1, ..., dn; dtype]`.
struct TensorType : Located {
  std::vector<ShapeItem> dims;
  Identifier elementType;
};

struct TupleType;
/// A tensor type, a tuple, or a named scalar type such as `i32`.
using Type = x3::variant<TensorType, x3::forward_ast<TupleType>, Identifier>;

struct TupleType : Located {
  std::vector<Type> elements;
};

//===----------------------------------------------------------------------===//
// Expressions and statements (function bodies)
//===----------------------------------------------------------------------===//

struct UnaryExpr;
struct BinaryExpr;
struct CallExpr;
struct MemberExpr;
struct IndexExpr;
struct TupleExpr;
struct ListExpr;

struct Expr
    : x3::variant<IntegerLiteral, FloatLiteral, BoolLiteral, Identifier,
                  x3::forward_ast<UnaryExpr>, x3::forward_ast<BinaryExpr>,
                  x3::forward_ast<CallExpr>, x3::forward_ast<MemberExpr>,
                  x3::forward_ast<IndexExpr>, x3::forward_ast<TupleExpr>,
                  x3::forward_ast<ListExpr>> {
  using base_type::base_type;
  using base_type::operator=;
};

struct UnaryExpr : Located {
  unsigned depth = 1; ///< height of the tree below, bounded by the parser
  std::string op;     ///< "-" or "!"
  Expr operand;
};

struct BinaryExpr : Located {
  unsigned depth = 1; ///< height of the tree below, bounded by the parser
  std::string op;     ///< "+", "==", "@", "&&", ...
  Expr lhs;
  Expr rhs;
};

/// `name = value` in a call; `keyword` is empty for a positional argument.
struct Argument : Located {
  boost::optional<Identifier> keyword;
  Expr value;
};

struct CallExpr : Located {
  unsigned depth = 1; ///< height of the tree below, bounded by the parser
  Expr callee;
  std::vector<ShapeItem> genericArgs; ///< explicit, `zero_state<B>()`
  std::vector<Argument> arguments;
};

struct MemberExpr : Located {
  unsigned depth = 1; ///< height of the tree below, bounded by the parser
  Expr base;
  Identifier member;
};

/// One entry of `x[...]`: an element, a slice `lo:hi` (both optional), or
/// `...` for all the axes not written.
struct Index : Located {
  enum Kind { Element, Slice, Ellipsis } kind = Element;
  boost::optional<Expr> lower; ///< the element for Element
  boost::optional<Expr> upper;
};

struct IndexExpr : Located {
  unsigned depth = 1; ///< height of the tree below, bounded by the parser
  Expr base;
  std::vector<Index> indices;
};

struct TupleExpr : Located {
  std::vector<Expr> elements;
};

/// `[a, *S, b]`; a spread item expands a Shape.
struct ListItem : Located {
  bool spread = false;
  Expr value;
};
struct ListExpr : Located {
  std::vector<ListItem> items;
};

struct TuplePattern;
using Pattern = x3::variant<Identifier, x3::forward_ast<TuplePattern>>;
struct TuplePattern : Located {
  std::vector<Pattern> elements;
};

struct LetStmt : Located {
  Pattern pattern;
  boost::optional<Type> annotation;
  Expr value;
};
struct ReturnStmt : Located {
  Expr value;
};
/// `place = value`: rebinding a local or writing into state.
struct AssignStmt : Located {
  Identifier target;
  std::vector<std::vector<Index>> indices; ///< one list per `[...]`
  Expr value;
};
/// `require TopK <= Experts`: a relation between sizes that the function
/// needs and its types cannot say, an obligation proven when bound.
struct RequireStmt : Located {
  ShapeSum lhs;
  std::string relation; ///< `<=` or `==`
  ShapeSum rhs;
};
struct ForStmt;
using Statement = x3::variant<LetStmt, ReturnStmt, AssignStmt, RequireStmt,
                              x3::forward_ast<ForStmt>>;
struct Body : Located {
  std::vector<Statement> statements;
};
struct ForStmt : Located {
  Identifier variable;
  Expr sequence; ///< what is iterated: a sub array
  Body body;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// `H: Dim`, `*S: Shape`, `T: Float = bf16`.
struct GenericParam : Located {
  bool variadic = false;
  Identifier name;
  Identifier kind;
  boost::optional<ShapeSum> defaultValue;
};

/// `std.nn.linear`, or `.norm` (relative: a module of the folder that holds
/// the file that names it).
struct ModulePath : Located {
  bool relative = false;
  std::vector<Identifier> parts;
};

/// `Linear<H, Vocab, T>` or `std.nn.linear::Linear<...>`.
struct BlockRef : Located {
  boost::optional<ModulePath> module;
  Identifier name;
  std::vector<ShapeItem> args;
};

struct SubMember : Located {
  Identifier name;
  BlockRef block;
  boost::optional<ShapeSum> count; ///< set for `[Block<...>; N]`
};

struct ParamMember : Located {
  Identifier name;
  Type type;
  bool optional = false;
};

struct StateMember : Located {
  Identifier name;
  Type type;
};

struct FnParam : Located {
  Identifier name;
  Type type;
};

struct FnMember : Located {
  bool isPublic = false;
  bool isEntry = false;
  Identifier name;
  std::vector<GenericParam> generics;
  std::vector<FnParam> params;
  boost::optional<Type> result;
  Body body;
};

using Member = x3::variant<SubMember, ParamMember, StateMember, FnMember>;

struct BlockDecl : Located {
  Identifier name;
  std::vector<GenericParam> generics;
  std::vector<Member> members;
};

struct UseDecl : Located {
  ModulePath module;
  std::vector<Identifier> names;
};

/// One parsed source file.
struct ModuleAST {
  std::vector<UseDecl> uses;
  std::vector<BlockDecl> blocks;
};

/// The source range of any expression or shape node.
llvm::SMRange rangeOf(const Expr &expr);
llvm::SMRange rangeOf(const ShapeFactor &factor);
llvm::SMRange rangeOf(const ShapeItem &item);
llvm::SMRange rangeOf(const Type &type);

} // namespace linnet::ast

#endif // LINNET_SYNTAX_AST_H

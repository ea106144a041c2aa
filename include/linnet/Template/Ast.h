//===- Ast.h - A parsed chat template ---------------------------*- C++ -*-===//
//
// The parser's one product and the renderer's one input: statements (text,
// `{{ }}`, if, for, set, macro, ...) holding expressions. Both are plain
// tagged structs: a template has a few thousand nodes, read once per render.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_AST_H
#define LINNET_TEMPLATE_AST_H

#include "linnet/Template/Builtins.h"
#include "linnet/Template/Lexer.h"
#include "linnet/Template/Value.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet::tmpl {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
using KeywordArguments = std::vector<std::pair<std::string, ExprPtr>>;

struct Expr {
  enum class Kind {
    Literal,     ///< literal
    Name,        ///< name
    Attribute,   ///< operands[0].name
    Item,        ///< operands[0][operands[1]]
    Slice,       ///< operands[0][1:2:3], each bound may be null
    Call,        ///< operands[0](operands[1..], keywords)
    Filter,      ///< operands[0] | name(operands[1..], keywords)
    Test,        ///< operands[0] is [not] name(operands[1..])
    Unary,       ///< name (`-`, `+`) operands[0]
    Binary,      ///< operands[0] name operands[1]
    Compare,     ///< operands[0] ops[0] operands[1] ops[1] ...
    And,         ///< operands[0] and operands[1]
    Or,          ///< operands[0] or operands[1]
    Not,         ///< not operands[0]
    Conditional, ///< operands[0] if operands[1] else operands[2] (may be null)
    List,        ///< [operands...]
    Tuple,       ///< (operands...)
    Dict,        ///< {operands[0]: operands[1], ...}
    Concat       ///< operands[0] ~ operands[1] ~ ...
  };
  Kind kind;
  Location location;
  Value literal;
  std::string name;
  std::vector<ExprPtr> operands;
  KeywordArguments keywords;
  std::vector<std::string> comparisons;
  bool negated = false;                   ///< Test: `is not`
  const FilterFunction *filter = nullptr; ///< Filter, resolved when parsed
  const TestFunction *test = nullptr;     ///< Test, resolved when parsed
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Node {
  enum class Kind {
    Text,        ///< text
    Output,      ///< {{ expr }}
    If,          ///< branches, then body as the else
    For,         ///< for targets in expr [if condition]: body else otherwise
    Set,         ///< set targets = expr (or targets[0].targets[1] = expr)
    SetBlock,    ///< set targets[0] | filters: body
    Macro,       ///< macro name(parameters): body
    FilterBlock, ///< filter filters: body
    Break,
    Continue,
    Generation ///< transformers' {% generation %}: body, rendered as is
  };
  Kind kind;
  Location location;
  std::string text;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body, otherwise;
  std::vector<std::string> targets;
  bool setsAttribute = false; ///< Set: `namespace.attribute = ...`
  std::vector<std::pair<std::string, ExprPtr>> parameters;
  std::vector<ExprPtr> filters; ///< Filter expressions whose input is null
};

/// The tokens of one template as statements. Errors name the template's line
/// and column: [TemplateMalformed] for what Jinja refuses too,
/// [TemplateUnsupported] for Jinja that linnet does not implement.
llvm::Expected<Body> parseTemplateTokens(llvm::ArrayRef<Token> tokens,
                                         llvm::StringRef fileName);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_AST_H

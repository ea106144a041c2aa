//===- BodyCheckerImpl.h - Internals shared by the body checker -*- C++ -*-===//
//
// The function checker is split over BodyChecker.cpp (statements, names,
// calls of block functions) and Builtins.cpp (the typing rules of built-in
// operations); this header is what they share. Not installed.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_SEMA_BODYCHECKERIMPL_H
#define LINNET_LIB_SEMA_BODYCHECKERIMPL_H

#include "linnet/Sema/BodyChecker.h"
#include "linnet/Sema/DeclPrinter.h"

#include "llvm/ADT/StringMap.h"

namespace linnet::detail {

/// A checked expression: its type and, for tensors, its graph value.
struct Value {
  ValueType type;
  int id = -1;
  /// Where a local or parameter was bound, for notes.
  llvm::SMRange declared;

  Value() = default;
  Value(ValueType type, int id, llvm::SMRange declared = {})
      : type(std::move(type)), id(id), declared(declared) {}
  static Value invalid() { return {}; }
};

/// A call of a block function, for the recursion and state checks.
struct CallSite {
  const BlockDecl *block = nullptr;
  std::string name;
  llvm::SMRange loc;
};

/// Ranks of the unknowns that stand for a callee's generics during
/// inference; above every declared generic, below run-time symbols.
inline constexpr unsigned kUnknownRank = 1u << 16;

/// Solves a callee's unknown generics (names containing `#`) from the
/// types of the arguments.
struct Unifier : Substitution {
  /// Matches `actual` against `pattern`, binding unknowns; on failure `why`
  /// says where (`; dimension 2 is ...`).
  bool unify(const ValueType &pattern, const ValueType &actual,
             std::string &why);
  ValueType apply(const ValueType &type) const {
    return substituteType(type, *this);
  }
  ShapeExpr apply(const ShapeExpr &size) const {
    return substituteSize(size, *this);
  }

private:
  bool unifySize(const ShapeExpr &pattern, const ShapeExpr &actual);
};

template <typename T> const T &unwrap(const T &node) { return node; }
template <typename T>
const T &unwrap(const boost::spirit::x3::forward_ast<T> &node) {
  return node.get();
}

class FunctionChecker {
public:
  FunctionChecker(const Program &program, DiagnosticEngine &diags,
                  const BlockDecl &block, const FnDecl &fn)
      : program(program), diags(diags), block(block), fn(fn) {}

  void run();

  FunctionGraph graph;
  BodyAnnotations annotations;
  std::vector<Obligation> obligations;
  std::vector<CallSite> calls;
  bool writesState = false;
  llvm::SMRange stateWriteLoc; ///< the first state write
  std::string stateWritten;    ///< its state member

private:
  friend struct BuiltinCall;

  // Statements.
  void checkBody(const ast::Body &body);
  void checkStatement(const ast::LetStmt &let);
  void checkStatement(const ast::ReturnStmt &ret);
  void checkStatement(const ast::AssignStmt &assign);
  void checkStatement(const ast::ForStmt &loop);
  void checkStatement(const ast::RequireStmt &require);
  void bindPattern(const ast::Pattern &pattern, const Value &value);
  static llvm::SMRange rangeOfStatement(const ast::Statement &statement);
  ValueType annotationType(const ast::Type &type);
  std::optional<ShapeExpr> shapeValue(const ast::ShapeSum &sum);
  std::optional<ShapeExpr> genericSize(const ast::Identifier &name);
  void noteDeclaration(const ast::Expr &expr);
  void noteDeclaration(const std::string &name, llvm::SMRange declared);

  // Expressions.
  Value check(const ast::Expr &expr);
  Value checkNode(const ast::IntegerLiteral &literal);
  Value checkNode(const ast::FloatLiteral &literal);
  Value checkNode(const ast::BoolLiteral &literal);
  Value checkNode(const ast::Identifier &name);
  Value checkNode(const ast::UnaryExpr &unary);
  Value checkNode(const ast::BinaryExpr &binary);
  Value checkNode(const ast::CallExpr &call);
  Value checkNode(const ast::MemberExpr &member);
  Value checkNode(const ast::IndexExpr &index);
  Value checkNode(const ast::TupleExpr &tuple);
  Value checkNode(const ast::ListExpr &list);

  Value resolveName(const ast::Identifier &name, bool callee = false);
  const GenericDecl *findGeneric(llvm::StringRef name) const;
  ValueType subInstance(const SubDecl &sub);
  Value memberRead(const std::string &label, const TypeRef &type,
                   llvm::SMRange loc);
  Value index(const Value &base, const std::vector<ast::Index> &indices,
              llvm::SMRange loc);
  std::optional<ShapeExpr> boundValue(const Value &value, llvm::SMRange loc);

  Value callFunction(const BlockDecl &target, const FnDecl &fn,
                     Substitution subst, const std::string &label,
                     const ast::CallExpr &call);
  Value callBuiltin(BuiltinId id, const ast::CallExpr &call);
  Value matmul(const Value &lhs, const Value &rhs, const ast::Expr &rhsExpr,
               llvm::SMRange lhsLoc, llvm::SMRange rhsLoc, llvm::SMRange loc);

  // Typing helpers.
  Value asTensor(const Value &value, llvm::SMRange loc);
  /// A size where a tensor (`i32`) is expected becomes an integer scalar.
  Value expectTensor(const Value &value, const ValueType &expected,
                     llvm::SMRange loc);
  /// Reports an element type (`T`, `f32`) used where `expected` (a size, a
  /// tensor) is; returns false when `value` is not one.
  bool reportElementAsValue(const Value &value, llvm::SMRange loc,
                            const std::string &expected);
  std::optional<ShapeExpr> staticSize(const Value &value, llvm::SMRange loc);
  std::optional<DimList> broadcast(const ValueType &a, const ValueType &b,
                                   const std::string &verb, llvm::SMRange loc);
  std::optional<ElementRef> commonElement(const ValueType &a,
                                          const ValueType &b,
                                          const std::string &verb,
                                          llvm::SMRange loc);
  std::optional<ShapeExpr> arithmetic(llvm::Expected<ShapeExpr> result,
                                      llvm::SMRange loc);
  /// Records a condition on sizes; false when it is refuted at once (and
  /// reported), so the operation yields no type to cascade from.
  bool obligation(Obligation::Kind kind, ShapeExpr lhs, ShapeExpr rhs,
                  const std::string &what, llvm::SMRange loc,
                  const std::string &context = "");
  bool isFloatElement(const ElementRef &element) const;

  // Graph.
  Value node(const std::string &label, llvm::ArrayRef<Value> inputs,
             ValueType result, llvm::SMRange loc);
  void addOutputs(GraphNode &graphNode, Value &value);
  void nameValue(const Value &value, const std::string &name);
  Value element(const Value &tuple, size_t index);
  std::vector<int> flattenIds(const Value &value);

  // Scopes.
  const Value *lookupLocal(llvm::StringRef name) const;
  void bindLocal(const ast::Identifier &name, Value value);
  ShapeExpr runtimeSymbol(const std::string &name);

  const Program &program;
  DiagnosticEngine &diags;
  const BlockDecl &block;
  const FnDecl &fn;
  std::vector<llvm::StringMap<Value>> scopes;
  std::map<std::string, Value> memberValues;
  std::vector<std::string> loopRepeat;

public:
  /// Sizes divided by sizes (`ValueHeads / KeyHeads`) are opaque symbols;
  /// each remembers its dividend and divisor so `KeyHeads * (ValueHeads /
  /// KeyHeads)` simplifies back to `ValueHeads`.
  std::map<std::string, std::pair<ShapeExpr, ShapeExpr>> quotients;

private:
  ShapeExpr quotient(const ShapeExpr &dividend, const ShapeExpr &divisor,
                     llvm::SMRange loc);
  ShapeExpr simplifyQuotients(const ShapeExpr &size);
  unsigned nextRuntimeSymbol = 0;
  unsigned nextUnknown = 0;
  bool returned = false;
  bool returnedInLoop = false; ///< reported; no `MissingReturn` follows
  llvm::SMRange returnRange;
};

} // namespace linnet::detail

#endif // LINNET_LIB_SEMA_BODYCHECKERIMPL_H

//===- BodyChecker.h - Typing function bodies -------------------*- C++ -*-===//
//
// Gives every expression of every function body a ValueType, by the typing
// rules of docs/language.md: calls of sub-blocks' functions infer their
// generics by unifying argument types, built-in operations have their own
// rules, and conditions that are arithmetic rather than identities (a
// reshape keeps the element count, a split's parts sum to the axis, a
// division is exact) become obligations, proven or refuted when generics are
// bound. The checked functions also record their dataflow, which is what
// `linnet graph` draws.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_BODYCHECKER_H
#define LINNET_SEMA_BODYCHECKER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/Builtins.h"
#include "linnet/Sema/ValueType.h"

#include <map>

namespace linnet {

/// An arithmetic condition a body relies on.
struct Obligation {
  enum Kind {
    Equal,    ///< lhs == rhs
    Integral, ///< lhs is an integer
    Divides,  ///< lhs divides rhs (both sizes)
    AtMost,   ///< lhs <= rhs
  } kind = Equal;
  ShapeExpr lhs, rhs;
  std::string what; ///< `reshape keeps the element count`
  /// What failed, in the types of the program, leading the message when it
  /// is refuted: `cannot reshape `Tensor[B, S, H; T]` to `[B, S, 2 * H]``.
  /// Empty for sizes that must be integers: the size itself leads.
  std::string context;
  /// Sizes divided by sizes that lhs and rhs mention (`Heads / KvHeads`):
  /// symbol name to dividend and divisor, so binding can evaluate them.
  std::map<std::string, std::pair<ShapeExpr, ShapeExpr>> quotients;
  llvm::SMRange loc;
  const BlockDecl *block = nullptr;
  enum Status { Proven, Refuted, Pending } status = Pending;
  /// After binding: how many instances of the block proved it, and the
  /// values of the first instance that refuted it.
  unsigned provenInstances = 0;
  std::string refutedWith;

  /// `B * S * H == B * S * Heads * HeadDim`, `HeadDim / 4 is an integer`.
  std::string statement() const;
};

/// One operation of a function's dataflow.
struct GraphNode {
  std::string label; ///< `matmul`, `q_proj.forward`, `param weight`
  /// Value ids read; for calls of block functions, one per parameter
  /// (-1 where the argument is not a tensor).
  std::vector<int> inputs;
  std::vector<int> outputs; ///< value ids
  /// For calls of block functions: what `linnet graph --depth` expands.
  const BlockDecl *calleeBlock = nullptr;
  const FnDecl *callee = nullptr;
  Substitution calleeGenerics; ///< callee's block and function generics
  std::string repeat;          ///< `Groups` when called for each of an array
  llvm::SMRange loc;
};

/// The dataflow of one checked function, in its block's generics.
struct FunctionGraph {
  std::vector<ValueType> values;
  std::vector<std::string> valueNames; ///< the variable, where there is one
  std::vector<int> params;             ///< value ids of the parameters
  std::vector<int> results;            ///< value ids returned
  std::vector<GraphNode> nodes;
};

/// What the checker resolved at one call, for IR generation.
struct CallResolution {
  /// A block function: the callee, its block's and its own generics in the
  /// caller's terms, and the argument bound to each parameter.
  const BlockDecl *calleeBlock = nullptr;
  const FnDecl *callee = nullptr;
  Substitution calleeGenerics;
  std::vector<const ast::Expr *> arguments;
  /// A built-in operation: which, and its arguments by parameter name.
  std::optional<BuiltinId> builtin;
  std::map<std::string, const ast::Expr *> builtinArguments;
};

/// The checker's conclusions about a body, keyed by syntax node, so that
/// IR generation walks the same syntax without deciding anything again.
/// Types are in the function's own generics.
struct BodyAnnotations {
  std::map<const ast::Expr *, ValueType> types;
  std::map<const ast::CallExpr *, CallResolution> calls;
  /// Sizes divided by sizes are opaque symbols in types (`ValueHeads /
  /// KeyHeads`); each name's dividend and divisor, to evaluate them.
  std::map<std::string, std::pair<ShapeExpr, ShapeExpr>> quotients;

  const ValueType *typeOf(const ast::Expr &expr) const {
    auto it = types.find(&expr);
    return it == types.end() ? nullptr : &it->second;
  }
  const CallResolution *resolution(const ast::CallExpr &call) const {
    auto it = calls.find(&call);
    return it == calls.end() ? nullptr : &it->second;
  }
};

struct CheckedFunction {
  const BlockDecl *block = nullptr;
  const FnDecl *fn = nullptr;
  FunctionGraph graph;
  BodyAnnotations annotations;
  bool writesState = false; ///< directly or through the functions it calls
  /// Where it writes state first (the assignment, or the call of a function
  /// that writes state) and what a note there says.
  llvm::SMRange stateWriteLoc;
  std::string stateWriteNote;
  bool ok = true;
};

struct CheckedProgram {
  std::map<std::pair<const BlockDecl *, std::string>, CheckedFunction>
      functions;
  std::vector<Obligation> obligations;

  const CheckedFunction *find(const BlockDecl *block,
                              llvm::StringRef name) const {
    auto it = functions.find({block, name.str()});
    return it == functions.end() ? nullptr : &it->second;
  }
};

/// Checks every body of every valid block; reports through `diags`.
CheckedProgram checkBodies(const Program &program, DiagnosticEngine &diags);

/// Decides every pending obligation in every bound instance of its block,
/// reporting each refuted one with the values involved. Returns false if
/// any is refuted.
bool proveObligations(CheckedProgram &program, const BoundModel &model,
                      DiagnosticEngine &diags);

/// `proven`, `refuted`, `pending`, with the instance count or values.
std::string obligationStatus(const Obligation &obligation, bool bound);

} // namespace linnet

#endif // LINNET_SEMA_BODYCHECKER_H

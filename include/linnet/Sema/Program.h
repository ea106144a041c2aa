//===- Program.h - Resolved, checked declarations ------------------*- C++
//-*-===//
//
// What Sema hands to every later stage: the modules that were loaded, and for
// each block its generics (with kinds and canonical ranks), its members with
// resolved sub-block references, and every type with its sizes already in
// ShapeExpr normal form. Bodies stay as syntax (ast::Body) until the body
// checker types them.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_PROGRAM_H
#define LINNET_SEMA_PROGRAM_H

#include "linnet/Model/BoundGeneric.h"
#include "linnet/Model/ElementType.h"
#include "linnet/Sema/ShapeExpr.h"
#include "linnet/Syntax/AST.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace linnet {

/// A generic parameter of a block or function.
struct GenericDecl {
  std::string name;
  GenericKind kind = GenericKind::Dim;
  /// Position in the canonical order: the block's generics, then the
  /// function's.
  unsigned rank = 0;
  std::optional<ShapeExpr> defaultSize;      ///< Dim with `= expr`
  std::optional<ElementType> defaultElement; ///< Float with `= bf16`
  llvm::SMRange loc;
  /// Its kind is not known (an error already reported); uses of it are
  /// not checked, so that one mistake is reported once.
  bool invalid = false;

  ShapeSymbol symbol() const { return {rank, name}; }
};

/// An element type as written: a concrete type or a Float generic.
struct ElementRef {
  std::string name;
  bool isGeneric = false;
};

/// One dimension of a tensor type: a size or a spread Shape generic.
struct DimEntry {
  std::optional<ShapeExpr> size; ///< empty for `*S`
  std::string spread;            ///< the Shape generic of `*S`
  llvm::SMRange loc;
};

/// A checked type: a tensor, a scalar, or a tuple.
struct TypeRef {
  enum Kind { Tensor, Scalar, Tuple } kind = Scalar;
  std::vector<DimEntry> dims;    ///< Tensor
  ElementRef element;            ///< Tensor and Scalar
  std::vector<TypeRef> elements; ///< Tuple
  llvm::SMRange loc;
};

/// A generic argument of a sub-block reference, checked against the kind of
/// the generic it binds.
struct GenericArg {
  GenericKind kind = GenericKind::Dim;
  std::optional<ShapeExpr> size; ///< Dim
  ElementRef element;            ///< Float
  std::string spread;            ///< Shape
  llvm::SMRange loc;
  bool isDefault = false; ///< filled from the generic's default
};

struct BlockDecl;
struct ModuleInfo;

/// The most block instances a bound model may expand to (the real model has
/// a few hundred): array elements are generated and loaded one by one.
inline constexpr uint64_t kMaxBlockInstances = 1u << 16;

struct SubDecl {
  std::string name;
  BlockDecl *block = nullptr;
  std::vector<GenericArg> args;   ///< one per generic of `block`
  std::optional<ShapeExpr> count; ///< arrays `[Block<...>; N]`
  llvm::SMRange loc;
};

struct ParamDecl {
  std::string name;
  TypeRef type;
  bool optional = false;
  llvm::SMRange loc;
};

struct StateDecl {
  std::string name;
  TypeRef type;
  llvm::SMRange loc;
};

struct FnParamDecl {
  std::string name;
  TypeRef type;
  llvm::SMRange loc;
};

struct FnDecl {
  std::string name;
  bool isPublic = false;
  bool isEntry = false;
  std::vector<GenericDecl> generics;
  std::vector<FnParamDecl> params;
  std::optional<TypeRef> result;
  const ast::FnMember *syntax = nullptr;
  llvm::SMRange loc;
};

using MemberDecl = std::variant<SubDecl, ParamDecl, StateDecl, FnDecl>;

struct BlockDecl {
  std::string name;
  ModuleInfo *module = nullptr;
  std::vector<GenericDecl> generics;
  std::vector<MemberDecl> members; ///< in declaration order
  const ast::BlockDecl *syntax = nullptr;
  /// False when a declaration error makes the block unusable downstream.
  bool valid = true;

  /// `qwen3_5_moe.attention::GatedAttention`.
  std::string qualifiedName() const;
  const GenericDecl *findGeneric(llvm::StringRef name) const;
  /// The member named `name` (sub, param, state or function), or null.
  const MemberDecl *findMember(llvm::StringRef name) const;
  bool hasEntries() const;

private:
  /// Built on first use, after the members are final.
  mutable llvm::StringMap<size_t> memberIndex;

public:
};

/// A `use` of one name, kept for resolution and diagnostics.
struct ImportRef {
  ModuleInfo *module = nullptr;
  std::string name;
  llvm::SMRange loc;
};

struct ModuleInfo {
  std::string name; ///< dotted: `qwen3_5_moe.attention`
  std::string path; ///< the file, as shown in diagnostics
  /// The module named by the folder that holds the file, which relative
  /// paths (`use .norm::RmsNorm`) start from: `qwen3_5_moe` for both
  /// `qwen3_5_moe.attention` and `qwen3_5_moe` (its module.linnet); empty
  /// for a file directly under a search root.
  std::string package;
  unsigned bufferId = 0;
  ast::ModuleAST syntax;
  llvm::StringMap<BlockDecl *> blocks;
  std::vector<ImportRef> imports;
  /// Names imported from modules that could not be found (reported once, at
  /// the `use`; uses of these names are not reported again).
  std::vector<std::string> unresolvedImports;
  /// Modules named by `use`, with the location of the `use`.
  std::vector<std::pair<ModuleInfo *, llvm::SMRange>> uses;
  bool isInput = false; ///< named by the command line, not only imported
};

/// Everything loaded for one compiler invocation.
struct Program {
  std::vector<std::unique_ptr<ModuleInfo>> modules;
  std::vector<std::unique_ptr<BlockDecl>> blocks;
  llvm::StringMap<ModuleInfo *> modulesByName;

  ModuleInfo *findModule(llvm::StringRef name) const {
    auto it = modulesByName.find(name);
    return it == modulesByName.end() ? nullptr : it->second;
  }
};

} // namespace linnet

#endif // LINNET_SEMA_PROGRAM_H

//===- DeclChecker.cpp - Generics, members and types of blocks ------------===//
//
// Checks declarations in three passes: each block's own generics (so sub
// references can be checked against any block's generics), then members and
// types, then containment cycles through subs. Shape expressions are
// converted to normal form here, in the scope of the generics they may use.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/DeclChecker.h"

#include "linnet/Sema/ModuleLoader.h"
#include "linnet/Sema/ShapeConverter.h"

#include "llvm/ADT/StringSet.h"

#include <functional>
#include <map>

using namespace linnet;
namespace x3 = boost::spirit::x3;

std::string linnet::sourceText(llvm::SMRange range) {
  if (!range.Start.isValid() || !range.End.isValid())
    return "";
  const char *begin = range.Start.getPointer();
  const char *end = range.End.getPointer();
  std::string text(begin, end > begin ? end : begin);
  // Quote long or multi-line text compactly.
  for (char &c : text)
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return text;
}

namespace {

/// The generics visible at one point: a block's, plus a function's own.
struct Scope {
  std::vector<const GenericDecl *> generics;

  const GenericDecl *find(llvm::StringRef name) const {
    for (const GenericDecl *generic : generics)
      if (generic->name == name)
        return generic;
    return nullptr;
  }
};

const ast::Identifier *singleIdentifier(const ast::ShapeSum &sum) {
  if (!sum.rest.empty() || !sum.first.rest.empty())
    return nullptr;
  return boost::get<ast::Identifier>(&sum.first.first);
}

std::string describeGeneric(const GenericDecl &generic) {
  return "a `" + kindName(generic.kind).str() + "` generic";
}

/// What a shape expression written where something else is expected is,
/// for a KindMismatch: a generic of some kind, an element type, a number or
/// a shape expression.
std::string describeShapeSum(const ast::ShapeSum &sum, const Scope &scope) {
  if (const ast::Identifier *name = singleIdentifier(sum)) {
    if (const GenericDecl *generic = scope.find(name->name))
      return describeGeneric(*generic);
    if (auto type = parseElementType(name->name))
      return isFloatType(*type) ? "a float element type"
                                : "an integer element type";
    return "an unknown name";
  }
  if (sum.rest.empty() && sum.first.rest.empty() &&
      boost::get<ast::IntegerLiteral>(&sum.first.first))
    return "a number";
  return "a shape expression";
}

class DeclChecker {
public:
  DeclChecker(Program &program, DiagnosticEngine &diags)
      : program(program), diags(diags) {}

  void run();

private:
  // Generic parameter lists, shared by blocks and functions.
  std::vector<GenericDecl>
  checkGenerics(const std::vector<ast::GenericParam> &params,
                unsigned firstRank, const Scope &outer, bool &ok);

  // Shape expressions.
  std::optional<ShapeExpr> convertShape(const ast::ShapeSum &sum,
                                        const Scope &scope);

  // Types and element types.
  std::optional<TypeRef> convertType(const ast::Type &type, const Scope &scope);
  std::optional<ElementRef> convertElement(const ast::Identifier &name,
                                           const Scope &scope, bool floatOnly);

  void checkBlockMembers(BlockDecl &block);
  std::optional<SubDecl> checkSub(const ast::SubMember &sub,
                                  const BlockDecl &owner, const Scope &scope);
  BlockDecl *resolveBlock(const ast::BlockRef &ref, const ModuleInfo &from);
  void checkRecursion();

  Program &program;
  DiagnosticEngine &diags;
};

std::vector<GenericDecl>
DeclChecker::checkGenerics(const std::vector<ast::GenericParam> &params,
                           unsigned firstRank, const Scope &outer, bool &ok) {
  std::vector<GenericDecl> result;
  llvm::StringMap<llvm::SMRange> seen;
  for (const GenericDecl *generic : outer.generics)
    seen[generic->name] = generic->loc;
  Scope scope = outer;
  for (const ast::GenericParam &param : params) {
    GenericDecl generic;
    generic.name = param.name.name;
    generic.loc = param.name.range;
    generic.rank = firstRank + unsigned(result.size());
    if (param.kind.name == "Dim") {
      generic.kind = GenericKind::Dim;
    } else if (param.kind.name == "Shape") {
      generic.kind = GenericKind::Shape;
    } else if (param.kind.name == "Float") {
      generic.kind = GenericKind::Float;
    } else {
      diags.report(param.kind.range, diag::UnknownKind, param.kind.name);
      ok = false;
      generic.invalid = true;
    }
    if (generic.invalid) {
      // Neither its `*` nor its default can be checked without a kind.
    } else if (generic.kind == GenericKind::Shape && !param.variadic) {
      diags.report(param.name.range, diag::VariadicMismatch,
                   "`" + generic.name +
                       ": Shape` has no `*`; a `Shape` generic is variadic "
                       "and is written `*" +
                       generic.name + ": Shape`");
      ok = false;
    } else if (generic.kind != GenericKind::Shape && param.variadic) {
      diags.report(param.range, diag::VariadicMismatch,
                   "`*" + generic.name + "` marks a `" +
                       kindName(generic.kind).str() +
                       "` generic as variadic; only a `Shape` generic is "
                       "written with `*`");
      ok = false;
    }
    if (auto [it, inserted] = seen.try_emplace(generic.name, param.name.range);
        !inserted) {
      diags.report(param.name.range, diag::DuplicateGeneric, generic.name);
      diags.report(it->second, diag::PreviousDeclaration, generic.name);
      ok = false;
      continue;
    }
    if (param.defaultValue && !generic.invalid) {
      if (generic.kind == GenericKind::Float) {
        const ast::Identifier *name = singleIdentifier(*param.defaultValue);
        std::optional<ElementType> type =
            name ? parseElementType(name->name) : std::nullopt;
        if (name && !type && !scope.find(name->name)) {
          diags.report(name->range, diag::UnknownType, name->name);
          ok = false;
        } else if (!type || !isFloatType(*type)) {
          diags.report(param.defaultValue->range, diag::KindMismatch,
                       sourceText(param.defaultValue->range),
                       describeShapeSum(*param.defaultValue, scope),
                       "a float element type");
          ok = false;
        } else {
          generic.defaultElement = type;
        }
      } else if (generic.kind == GenericKind::Dim) {
        // A Dim default may use the generics declared before it.
        generic.defaultSize = convertShape(*param.defaultValue, scope);
        if (!generic.defaultSize)
          ok = false;
      } else {
        diags.report(param.defaultValue->range, diag::VariadicMismatch,
                     "`*" + generic.name +
                         ": Shape` has a default; a `Shape` generic takes "
                         "its dimensions from each use and has none");
        ok = false;
      }
    }
    result.push_back(std::move(generic));
    scope.generics.push_back(&result.back());
    // `result` may reallocate: rebuild the scope's view of it.
    scope.generics.resize(outer.generics.size());
    for (const GenericDecl &added : result)
      scope.generics.push_back(&added);
  }
  return result;
}

std::optional<ShapeExpr> DeclChecker::convertShape(const ast::ShapeSum &sum,
                                                   const Scope &scope) {
  return ShapeConverter(diags,
                        [&](const ast::Identifier &name) {
                          return ShapeConverter::sizeOfGeneric(
                              name, scope.find(name.name), diags);
                        })
      .convert(sum);
}

std::optional<ElementRef>
DeclChecker::convertElement(const ast::Identifier &name, const Scope &scope,
                            bool floatOnly) {
  if (const GenericDecl *generic = scope.find(name.name)) {
    if (generic->invalid)
      return std::nullopt;
    if (generic->kind == GenericKind::Float)
      return ElementRef{name.name, true};
    diags.report(name.range, diag::KindMismatch, name.name,
                 describeGeneric(*generic), "an element type");
    diags.report(generic->loc, diag::DeclaredHere, name.name);
    return std::nullopt;
  }
  std::optional<ElementType> type = parseElementType(name.name);
  if (!type) {
    diags.report(name.range, diag::UnknownType, name.name);
    return std::nullopt;
  }
  if (floatOnly && !isFloatType(*type)) {
    diags.report(name.range, diag::KindMismatch, name.name,
                 "an integer element type", "a float element type");
    return std::nullopt;
  }
  return ElementRef{name.name, false};
}

std::optional<TypeRef> DeclChecker::convertType(const ast::Type &type,
                                                const Scope &scope) {
  TypeRef result;
  result.loc = ast::rangeOf(type);
  if (auto *tensor = boost::get<ast::TensorType>(&type)) {
    result.kind = TypeRef::Tensor;
    bool ok = true;
    for (const ast::ShapeItem &item : tensor->dims) {
      DimEntry dim;
      dim.loc = ast::rangeOf(item);
      if (auto *spread = boost::get<ast::ShapeSpread>(&item)) {
        const GenericDecl *generic = scope.find(spread->name.name);
        if (!generic) {
          diags.report(spread->name.range, diag::UnknownGeneric,
                       spread->name.name);
          ok = false;
        } else if (generic->invalid) {
          ok = false;
        } else if (generic->kind != GenericKind::Shape) {
          diags.report(spread->range, diag::KindMismatch, spread->name.name,
                       describeGeneric(*generic), "a `Shape` to spread");
          diags.report(generic->loc, diag::DeclaredHere, spread->name.name);
          ok = false;
        }
        dim.spread = spread->name.name;
      } else {
        const auto &sum = boost::get<ast::ShapeSum>(item);
        // A lone Shape generic without `*` is a common slip: say so.
        if (const ast::Identifier *name = singleIdentifier(sum)) {
          const GenericDecl *generic = scope.find(name->name);
          if (generic && !generic->invalid &&
              generic->kind == GenericKind::Shape) {
            diags.report(name->range, diag::ShapeNotExpected, name->name,
                         "dimension");
            diags.report(generic->loc, diag::DeclaredHere, name->name);
            ok = false;
            continue;
          }
        }
        dim.size = convertShape(sum, scope);
        ok &= dim.size.has_value();
      }
      result.dims.push_back(std::move(dim));
    }
    auto element = convertElement(tensor->elementType, scope, false);
    if (!element || !ok)
      return std::nullopt;
    result.element = *element;
    return result;
  }
  if (auto *tuple = boost::get<x3::forward_ast<ast::TupleType>>(&type)) {
    result.kind = TypeRef::Tuple;
    bool ok = true;
    for (const ast::Type &element : tuple->get().elements) {
      auto converted = convertType(element, scope);
      ok &= converted.has_value();
      if (converted)
        result.elements.push_back(std::move(*converted));
    }
    if (!ok)
      return std::nullopt;
    return result;
  }
  const auto &name = boost::get<ast::Identifier>(type);
  result.kind = TypeRef::Scalar;
  auto element = convertElement(name, scope, false);
  if (!element)
    return std::nullopt;
  result.element = *element;
  return result;
}

BlockDecl *DeclChecker::resolveBlock(const ast::BlockRef &ref,
                                     const ModuleInfo &from) {
  const std::string &name = ref.name.name;
  if (ref.module) {
    std::string moduleName = moduleNameOf(*ref.module, from);
    ModuleInfo *module = program.findModule(moduleName);
    if (!module)
      return nullptr; // reported by the loader
    auto it = module->blocks.find(name);
    if (it == module->blocks.end() || !it->second) {
      diags.report(ref.name.range, diag::UnknownImport, moduleName, name);
      return nullptr;
    }
    return it->second;
  }
  if (auto it = from.blocks.find(name); it != from.blocks.end() && it->second)
    return it->second;
  const ImportRef *found = nullptr;
  BlockDecl *block = nullptr;
  // An import that failed was reported at its `use`.
  bool importFailed = llvm::is_contained(from.unresolvedImports, name);
  for (const ImportRef &import : from.imports) {
    if (import.name != name)
      continue;
    auto it = import.module->blocks.find(name);
    if (it == import.module->blocks.end() || !it->second) {
      importFailed = true; // reported as UnknownImport
      continue;
    }
    if (found && found->module != import.module) {
      diags.report(ref.name.range, diag::AmbiguousName, name,
                   found->module->name, import.module->name);
      diags.report(found->loc, diag::ImportedHere, name);
      diags.report(import.loc, diag::ImportedHere, name);
      return nullptr;
    }
    found = &import;
    block = it->second;
  }
  if (!block && !importFailed)
    diags.report(ref.name.range, diag::UnknownBlock, name);
  return block;
}

std::optional<SubDecl> DeclChecker::checkSub(const ast::SubMember &sub,
                                             const BlockDecl &owner,
                                             const Scope &scope) {
  SubDecl result;
  result.name = sub.name.name;
  result.loc = sub.name.range;
  bool ok = true;
  if (sub.count) {
    result.count = convertShape(*sub.count, scope);
    if (!result.count) {
      ok = false;
    } else if (auto value = result.count->constantValue();
               value && !(value->numerator() > 0 && value->isInteger())) {
      diags.report(sub.count->range, diag::NonPositiveLength,
                   result.count->str());
      ok = false;
    }
  }
  result.block = resolveBlock(sub.block, *owner.module);
  if (!result.block)
    return std::nullopt;
  // A literal count past the limit is refused unbound; one that depends on
  // generics, when they are bound (Binding.cpp).
  if (auto value = result.count ? result.count->constantValue() : std::nullopt;
      ok && value && value->numerator() > int64_t(kMaxBlockInstances)) {
    diags.report(sub.count->range, diag::TooManyInstances, result.name,
                 uint64_t(value->numerator()), result.block->name,
                 kMaxBlockInstances);
    ok = false;
  }
  const BlockDecl &target = *result.block;
  // The target's generics are checked before any member, so its list is
  // complete here even when it is declared later.
  size_t required = 0;
  for (const GenericDecl &generic : target.generics)
    if (!generic.defaultSize && !generic.defaultElement)
      required = &generic - target.generics.data() + 1;
  size_t given = sub.block.args.size();
  if (given < required || given > target.generics.size()) {
    size_t most = target.generics.size();
    std::string expected = std::to_string(most);
    if (required != most)
      expected = std::to_string(required) + " to " + expected;
    expected += most == 1 ? " generic argument" : " generic arguments";
    diags.report(sub.block.range, diag::GenericArity, target.name, expected,
                 unsigned(given));
    std::string list;
    for (const GenericDecl &generic : target.generics) {
      list += (list.empty() ? "`" : ", `") +
              std::string(generic.kind == GenericKind::Shape ? "*" : "") +
              generic.name + ": " + kindName(generic.kind).str();
      if (generic.defaultSize)
        list += " = " + generic.defaultSize->str();
      if (generic.defaultElement)
        list += " = " + elementTypeName(*generic.defaultElement).str();
      list += "`";
    }
    diags.report(target.syntax->name.range, diag::GenericsAre,
                 target.qualifiedName(), list.empty() ? "none" : list);
    return std::nullopt;
  }
  for (size_t i = 0; i < target.generics.size(); ++i) {
    const GenericDecl &param = target.generics[i];
    GenericArg arg;
    arg.kind = param.kind;
    if (i >= given) {
      arg.isDefault = true;
      arg.size = param.defaultSize;
      if (param.defaultElement)
        arg.element =
            ElementRef{elementTypeName(*param.defaultElement).str(), false};
      result.args.push_back(std::move(arg));
      continue;
    }
    const ast::ShapeItem &item = sub.block.args[i];
    arg.loc = ast::rangeOf(item);
    if (param.invalid) {
      ok = false; // its kind is unknown, already reported
      continue;
    }
    auto *spread = boost::get<ast::ShapeSpread>(&item);
    const ast::ShapeSum *sum = boost::get<ast::ShapeSum>(&item);
    switch (param.kind) {
    case GenericKind::Dim:
      if (spread) {
        diags.report(arg.loc, diag::KindMismatch, "*" + spread->name.name,
                     "a spread `Shape`", "a size for `" + param.name + "`");
        ok = false;
        break;
      }
      arg.size = convertShape(*sum, scope);
      ok &= arg.size.has_value();
      break;
    case GenericKind::Float: {
      const ast::Identifier *name = sum ? singleIdentifier(*sum) : nullptr;
      if (!name) {
        diags.report(arg.loc, diag::KindMismatch, sourceText(arg.loc),
                     spread ? "a spread `Shape`"
                            : describeShapeSum(*sum, scope),
                     "an element type for `" + param.name + "`");
        ok = false;
        break;
      }
      auto element = convertElement(*name, scope, /*floatOnly=*/true);
      ok &= element.has_value();
      if (element)
        arg.element = *element;
      break;
    }
    case GenericKind::Shape: {
      const GenericDecl *generic =
          spread ? scope.find(spread->name.name) : nullptr;
      if (generic && generic->invalid) {
        ok = false;
        break;
      }
      if (spread && !generic) {
        diags.report(spread->name.range, diag::UnknownGeneric,
                     spread->name.name);
        ok = false;
        break;
      }
      if (spread && generic->kind != GenericKind::Shape) {
        diags.report(arg.loc, diag::KindMismatch, spread->name.name,
                     describeGeneric(*generic),
                     "a `Shape` to spread for `" + param.name + "`");
        diags.report(generic->loc, diag::DeclaredHere, spread->name.name);
        ok = false;
        break;
      }
      if (!spread) {
        // A lone Shape generic without `*` is a common slip: say so.
        const ast::Identifier *name = singleIdentifier(*sum);
        const GenericDecl *named = name ? scope.find(name->name) : nullptr;
        if (named && named->invalid) {
        } else if (named && named->kind == GenericKind::Shape) {
          diags.report(name->range, diag::ShapeNotExpected, name->name,
                       "generic argument");
          diags.report(named->loc, diag::DeclaredHere, name->name);
        } else {
          diags.report(arg.loc, diag::KindMismatch, sourceText(arg.loc),
                       describeShapeSum(*sum, scope),
                       "a `*Shape` spread for `" + param.name + "`");
        }
        ok = false;
        break;
      }
      arg.spread = spread->name.name;
      break;
    }
    }
    result.args.push_back(std::move(arg));
  }
  if (!ok)
    return std::nullopt;
  return result;
}

void DeclChecker::checkBlockMembers(BlockDecl &block) {
  Scope scope;
  for (const GenericDecl &generic : block.generics)
    scope.generics.push_back(&generic);
  llvm::StringMap<llvm::SMRange> names;
  auto declare = [&](const ast::Identifier &name) {
    auto [it, inserted] = names.try_emplace(name.name, name.range);
    if (inserted)
      return true;
    diags.report(name.range, diag::DuplicateMember, name.name, block.name);
    diags.report(it->second, diag::PreviousDeclaration, name.name);
    block.valid = false;
    return false;
  };

  for (const ast::Member &member : block.syntax->members) {
    if (auto *sub = boost::get<ast::SubMember>(&member)) {
      bool fresh = declare(sub->name);
      auto checked = checkSub(*sub, block, scope);
      if (checked && fresh)
        block.members.push_back(std::move(*checked));
      else
        block.valid = false;
    } else if (auto *param = boost::get<ast::ParamMember>(&member)) {
      bool fresh = declare(param->name);
      auto type = convertType(param->type, scope);
      if (type && fresh)
        block.members.push_back(ParamDecl{param->name.name, std::move(*type),
                                          param->optional, param->name.range});
      else
        block.valid = false;
    } else if (auto *state = boost::get<ast::StateMember>(&member)) {
      bool fresh = declare(state->name);
      auto type = convertType(state->type, scope);
      if (type && fresh)
        block.members.push_back(
            StateDecl{state->name.name, std::move(*type), state->name.range});
      else
        block.valid = false;
    } else {
      const auto &fn = boost::get<ast::FnMember>(member);
      bool fresh = declare(fn.name);
      FnDecl decl;
      decl.name = fn.name.name;
      decl.isPublic = fn.isPublic;
      decl.isEntry = fn.isEntry;
      decl.syntax = &fn;
      decl.loc = fn.name.range;
      bool ok = fresh;
      decl.generics = checkGenerics(fn.generics,
                                    unsigned(block.generics.size()), scope, ok);
      Scope fnScope = scope;
      for (const GenericDecl &generic : decl.generics)
        fnScope.generics.push_back(&generic);
      llvm::StringMap<llvm::SMRange> paramNames;
      for (const ast::FnParam &param : fn.params) {
        if (auto [it, inserted] =
                paramNames.try_emplace(param.name.name, param.name.range);
            !inserted) {
          diags.report(param.name.range, diag::DuplicateParameter,
                       param.name.name, decl.name);
          diags.report(it->second, diag::PreviousDeclaration, param.name.name);
          ok = false;
        }
        auto type = convertType(param.type, fnScope);
        ok &= type.has_value();
        if (type)
          decl.params.push_back(
              FnParamDecl{param.name.name, std::move(*type), param.name.range});
      }
      if (fn.result) {
        decl.result = convertType(*fn.result, fnScope);
        ok &= decl.result.has_value();
      }
      if (ok)
        block.members.push_back(std::move(decl));
      else
        block.valid = false;
    }
  }
}

void DeclChecker::checkRecursion() {
  // Depth-first search over sub edges, with an explicit stack so a chain of
  // a million blocks cannot exhaust the native one; a back edge closes a
  // cycle. On the way out each block learns how deep its subs nest, which
  // bounds every later walk of the tree (binding, graphs).
  enum State { Unvisited, Active, Done };
  std::map<const BlockDecl *, State> state;
  std::map<const BlockDecl *, unsigned> height;
  struct Frame {
    BlockDecl *block;
    size_t next = 0; ///< the member to look at next
  };
  std::vector<Frame> stack;
  bool reportedDepth = false;
  for (const auto &root : program.blocks) {
    if (state[root.get()] != Unvisited)
      continue;
    state[root.get()] = Active;
    stack.push_back({root.get()});
    while (!stack.empty()) {
      Frame &frame = stack.back();
      BlockDecl *block = frame.block;
      if (frame.next == block->members.size()) {
        unsigned deepest = 0;
        for (const MemberDecl &member : block->members)
          if (auto *sub = std::get_if<SubDecl>(&member))
            deepest = std::max(deepest, height[sub->block]);
        height[block] = deepest + 1;
        if (height[block] > kMaxSubNesting) {
          block->valid = false;
          if (!reportedDepth)
            diags.report(block->syntax->name.range, diag::SubNestingTooDeep,
                         block->name, height[block], kMaxSubNesting);
          reportedDepth = true;
        }
        state[block] = Done;
        stack.pop_back();
        continue;
      }
      auto *sub = std::get_if<SubDecl>(&block->members[frame.next++]);
      if (!sub)
        continue;
      if (state[sub->block] == Active) {
        auto start =
            std::find_if(stack.begin(), stack.end(),
                         [&](const Frame &f) { return f.block == sub->block; });
        std::string cycle;
        for (auto it = start; it != stack.end(); ++it)
          cycle += "`" + it->block->name + "` -> ";
        cycle += "`" + sub->block->name + "`";
        diags.report(sub->loc, diag::RecursiveBlock, sub->block->name, cycle);
        for (auto it = start; it != stack.end(); ++it)
          it->block->valid = false;
      } else if (state[sub->block] == Unvisited) {
        state[sub->block] = Active;
        stack.push_back({sub->block});
      }
    }
  }
}

void DeclChecker::run() {
  for (const auto &block : program.blocks) {
    bool ok = true;
    block->generics = checkGenerics(block->syntax->generics, 0, Scope{}, ok);
    block->valid = ok;
  }
  for (const auto &block : program.blocks)
    checkBlockMembers(*block);
  checkRecursion();
}

} // namespace

bool linnet::checkDeclarations(Program &program, DiagnosticEngine &diags) {
  unsigned before = diags.errorCount();
  DeclChecker(program, diags).run();
  return diags.errorCount() == before;
}

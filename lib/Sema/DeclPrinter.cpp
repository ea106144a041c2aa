//===- DeclPrinter.cpp - Canonical text of declarations -------------------===//
//
// The printing half of `linnet inspect`; the registry page is its
// specification, so every space and comma here is deliberate.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/DeclPrinter.h"

#include <algorithm>
#include <set>

using namespace linnet;

namespace {

std::string formatDims(const std::vector<DimEntry> &dims) {
  std::string text;
  for (const DimEntry &dim : dims) {
    if (!text.empty())
      text += ", ";
    text += dim.size ? dim.size->str() : "*" + dim.spread;
  }
  return text;
}

std::string formatArg(const GenericArg &arg) {
  switch (arg.kind) {
  case GenericKind::Dim:
    return arg.size ? arg.size->str() : "?";
  case GenericKind::Float:
    return arg.element.name;
  case GenericKind::Shape:
    return "*" + arg.spread;
  }
  return "";
}

} // namespace

std::string linnet::formatType(const TypeRef &type) {
  switch (type.kind) {
  case TypeRef::Tensor: {
    std::string dims = formatDims(type.dims);
    return "Tensor[" + dims + (dims.empty() ? ";" : "; ") + type.element.name +
           "]";
  }
  case TypeRef::Scalar:
    return type.element.name;
  case TypeRef::Tuple: {
    std::string text = "(";
    for (const TypeRef &element : type.elements)
      text += (text.size() > 1 ? ", " : "") + formatType(element);
    return text + ")";
  }
  }
  return "";
}

std::string linnet::formatGenerics(const std::vector<GenericDecl> &generics) {
  if (generics.empty())
    return "";
  std::string text = "<";
  for (const GenericDecl &generic : generics) {
    if (text.size() > 1)
      text += ", ";
    if (generic.kind == GenericKind::Shape)
      text += "*";
    text += generic.name + ": " + kindName(generic.kind).str();
    if (generic.defaultSize)
      text += " = " + generic.defaultSize->str();
    if (generic.defaultElement)
      text += " = " + elementTypeName(*generic.defaultElement).str();
  }
  return text + ">";
}

std::string linnet::formatSignature(const FnDecl &fn) {
  std::string text = fn.name + formatGenerics(fn.generics) + "(";
  for (const FnParamDecl &param : fn.params) {
    if (text.back() != '(')
      text += ", ";
    text += param.name + ": " + formatType(param.type);
  }
  text += ")";
  if (fn.result)
    text += " -> " + formatType(*fn.result);
  return text;
}

std::string linnet::formatMember(const MemberDecl &member) {
  if (auto *sub = std::get_if<SubDecl>(&member)) {
    std::string ref = sub->block->name;
    // Trailing arguments left to their defaults are not written.
    size_t written = sub->args.size();
    while (written > 0 && sub->args[written - 1].isDefault)
      --written;
    if (written > 0) {
      ref += "<";
      for (size_t i = 0; i < written; ++i)
        ref += (i ? ", " : "") + formatArg(sub->args[i]);
      ref += ">";
    }
    if (sub->count)
      ref = "[" + ref + "; " + sub->count->str() + "]";
    return "sub " + sub->name + ": " + ref;
  }
  if (auto *param = std::get_if<ParamDecl>(&member))
    return "param " + param->name + ": " + formatType(param->type) +
           (param->optional ? "?" : "");
  if (auto *state = std::get_if<StateDecl>(&member))
    return "state " + state->name + ": " + formatType(state->type);
  const auto &fn = std::get<FnDecl>(member);
  std::string prefix = fn.isPublic ? "pub " : "";
  prefix += fn.isEntry ? "entry " : "fn ";
  return prefix + formatSignature(fn);
}

void linnet::printBlock(const BlockDecl &block, llvm::raw_ostream &os) {
  os << block.qualifiedName() << formatGenerics(block.generics) << "\n";
  for (const MemberDecl &member : block.members)
    os << "  " << formatMember(member) << "\n";
}

std::vector<const BlockDecl *> linnet::inspectedBlocks(const Program &program) {
  std::set<const BlockDecl *> reached;
  std::vector<const BlockDecl *> work;
  for (const auto &block : program.blocks)
    if (block->module->isInput && block->valid)
      work.push_back(block.get());
  while (!work.empty()) {
    const BlockDecl *block = work.back();
    work.pop_back();
    if (!reached.insert(block).second)
      continue;
    for (const MemberDecl &member : block->members)
      if (auto *sub = std::get_if<SubDecl>(&member); sub && sub->block->valid)
        work.push_back(sub->block);
  }
  std::vector<const BlockDecl *> sorted(reached.begin(), reached.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const BlockDecl *a, const BlockDecl *b) {
              if (a->name != b->name)
                return a->name < b->name;
              return a->module->name < b->module->name;
            });
  return sorted;
}

void linnet::printBlocks(llvm::ArrayRef<const BlockDecl *> blocks,
                         llvm::raw_ostream &os) {
  bool first = true;
  for (const BlockDecl *block : blocks) {
    if (!first)
      os << "\n";
    first = false;
    printBlock(*block, os);
  }
}

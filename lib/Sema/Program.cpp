//===- Program.cpp - Names and properties of checked declarations ---------===//
//
// Small lookups over the declarations of Program.h: kind and element type
// names, and block queries used by every later stage.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/Program.h"

#include "llvm/ADT/StringSwitch.h"

using namespace linnet;

llvm::StringRef linnet::kindName(GenericKind kind) {
  switch (kind) {
  case GenericKind::Dim:
    return "Dim";
  case GenericKind::Shape:
    return "Shape";
  case GenericKind::Float:
    return "Float";
  }
  return "";
}

std::optional<ElementType> linnet::parseElementType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementType>>(name)
      .Case("bf16", ElementType::BF16)
      .Case("f16", ElementType::F16)
      .Case("f32", ElementType::F32)
      .Case("f64", ElementType::F64)
      .Case("i1", ElementType::I1)
      .Case("i8", ElementType::I8)
      .Case("i16", ElementType::I16)
      .Case("i32", ElementType::I32)
      .Case("i64", ElementType::I64)
      .Default(std::nullopt);
}

llvm::StringRef linnet::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::BF16:
    return "bf16";
  case ElementType::F16:
    return "f16";
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::I1:
    return "i1";
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  }
  return "";
}

bool linnet::isFloatType(ElementType type) {
  return type == ElementType::BF16 || type == ElementType::F16 ||
         type == ElementType::F32;
}

unsigned linnet::elementTypeBytes(ElementType type) {
  switch (type) {
  case ElementType::I1:
  case ElementType::I8:
    return 1;
  case ElementType::BF16:
  case ElementType::F16:
  case ElementType::I16:
    return 2;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  }
  return 0;
}

std::string BlockDecl::qualifiedName() const {
  return module->name + "::" + name;
}

const GenericDecl *BlockDecl::findGeneric(llvm::StringRef genericName) const {
  for (const GenericDecl &generic : generics)
    if (generic.name == genericName)
      return &generic;
  return nullptr;
}

const MemberDecl *BlockDecl::findMember(llvm::StringRef memberName) const {
  if (memberIndex.empty())
    for (size_t i = 0; i < members.size(); ++i)
      memberIndex.try_emplace(
          std::visit([](const auto &m) { return m.name; }, members[i]), i);
  auto it = memberIndex.find(memberName);
  return it == memberIndex.end() ? nullptr : &members[it->second];
}

bool BlockDecl::hasEntries() const {
  for (const MemberDecl &member : members)
    if (auto *fn = std::get_if<FnDecl>(&member); fn && fn->isEntry)
      return true;
  return false;
}

std::optional<ElementType> linnet::elementFromConfig(llvm::StringRef text) {
  if (text == "bfloat16")
    return ElementType::BF16;
  if (text == "float16" || text == "half")
    return ElementType::F16;
  if (text == "float32" || text == "float")
    return ElementType::F32;
  auto type = parseElementType(text);
  if (type && isFloatType(*type))
    return type;
  return std::nullopt;
}

//===- Program.cpp - Names and properties of checked declarations ---------===//
//
// Block queries used by every later stage.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/Program.h"

using namespace linnet;

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

//===- DeclPrinter.h - Declarations in their canonical text --------*- C++
//-*-===//
//
// Prints checked declarations the way `linnet inspect` shows them (and the
// registry page lists them): headers `module::Block<generics>`, members two
// spaces in, sizes in canonical form. The same functions format types in
// diagnostics, so a type reads the same everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_DECLPRINTER_H
#define LINNET_SEMA_DECLPRINTER_H

#include "linnet/Sema/Program.h"

#include "llvm/Support/raw_ostream.h"

namespace linnet {

std::string formatType(const TypeRef &type);
std::string formatGenerics(const std::vector<GenericDecl> &generics);
/// `forward<B: Dim, S: Dim>(tokens: Tensor[B, S; i32]) -> Tensor[...]`.
std::string formatSignature(const FnDecl &fn);
std::string formatMember(const MemberDecl &member);

/// One block: its header line and one line per member.
void printBlock(const BlockDecl &block, llvm::raw_ostream &os);

/// The blocks of the input modules and every block they reach through subs,
/// sorted by name (then module), valid ones only.
std::vector<const BlockDecl *> inspectedBlocks(const Program &program);

/// What `linnet inspect` prints without bindings: the blocks, one blank line
/// between them.
void printBlocks(llvm::ArrayRef<const BlockDecl *> blocks,
                 llvm::raw_ostream &os);

} // namespace linnet

#endif // LINNET_SEMA_DECLPRINTER_H

//===- DeclChecker.h - Checking block declarations -----------------*- C++
//-*-===//
//
// Turns each registered block's syntax into checked declarations: generics
// with kinds and ranks, sub-block references resolved and their generic
// arguments checked for arity and kind, types with sizes in normal form.
// Reports every rule of docs/language.md "Declarations"; a block with an
// error is marked invalid so later stages skip it instead of cascading.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_DECLCHECKER_H
#define LINNET_SEMA_DECLCHECKER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Program.h"

namespace linnet {

/// Blocks may contain blocks (through subs) this many levels deep.
inline constexpr unsigned kMaxSubNesting = 256;

/// Checks every block of `program`. Returns false if any error was reported.
bool checkDeclarations(Program &program, DiagnosticEngine &diags);

/// The source text of a range (for quoting expressions in diagnostics).
std::string sourceText(llvm::SMRange range);

} // namespace linnet

#endif // LINNET_SEMA_DECLCHECKER_H

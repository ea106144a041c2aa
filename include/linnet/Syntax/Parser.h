//===- Parser.h - Parsing Linnet source into an AST ----------------*- C++
//-*-===//
//
// The one entry point of the Syntax stage: a buffer in, a ModuleAST out, with
// every syntax error reported through the DiagnosticEngine. The parser
// recovers at member and block boundaries, so one run reports several errors;
// what failed to parse is left out of the AST.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SYNTAX_PARSER_H
#define LINNET_SYNTAX_PARSER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Syntax/AST.h"

namespace linnet {

/// Limits that keep every input's cost bounded (stack depth, tree height).
struct ParserLimits {
  /// Nesting of brackets, prefix operators, tuples and bodies.
  static constexpr unsigned maxNesting = 128;
  /// Height of an operator or postfix chain (`a + b + ...`, `f()()...`).
  static constexpr unsigned maxChain = 256;
};

/// Checks the raw bytes (UTF-8, no NUL, comments terminated) and parses the
/// buffer `bufferId` of the engine's SourceMgr. Returns the blocks and uses
/// that parsed; `diags.hadError()` tells whether anything was rejected.
ast::ModuleAST parseModule(unsigned bufferId, DiagnosticEngine &diags);

} // namespace linnet

#endif // LINNET_SYNTAX_PARSER_H

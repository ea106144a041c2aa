//===- Lexer.h - A chat template's text and tags as tokens ------*- C++ -*-===//
//
// Jinja's lexer as transformers configures it (trim_blocks, lstrip_blocks,
// no trailing newline kept): literal text, with the whitespace control of
// `{%-`/`-%}`/`{%+` applied, between the tokens of `{{ }}` and `{% %}` tags.
// Comments are dropped here.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_LEXER_H
#define LINNET_TEMPLATE_LEXER_H

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace linnet::tmpl {

/// Where a token starts in the template: 1-based line and column (in bytes).
struct Location {
  unsigned line = 1, column = 1;
};

struct Token {
  enum class Kind {
    Text,          ///< literal output
    VariableBegin, ///< `{{`
    VariableEnd,   ///< `}}`
    BlockBegin,    ///< `{%`
    BlockEnd,      ///< `%}`
    Name,
    Integer,
    Float,
    String,   ///< its value, escapes decoded
    Operator, ///< `+`, `//`, `==`, `(`, `|`, ...
    End
  };
  Kind kind;
  std::string text;
  Location location;

  bool isOperator(llvm::StringRef op) const {
    return kind == Kind::Operator && text == op;
  }
  bool isName(llvm::StringRef name) const {
    return kind == Kind::Name && text == name;
  }
};

/// The template `source` (named `fileName` in errors) as tokens ending in End.
/// Errors: `file:line:col: what [TemplateMalformed]`.
llvm::Expected<std::vector<Token>> lexTemplate(llvm::StringRef source,
                                               llvm::StringRef fileName);

/// `file:line:col: message [id]` for a template error.
llvm::Error templateError(ErrorId id, llvm::StringRef fileName,
                          Location location, const llvm::Twine &message);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_LEXER_H

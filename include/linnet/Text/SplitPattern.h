//===- SplitPattern.h - A tokenizer's regular expressions, through PCRE2 --===//
//
// tokenizer.json writes its pre-tokenizer patterns for Oniguruma (what HF
// `tokenizers` uses); PCRE2 (with UTF, UCP and its JIT) reads the same
// syntax but for one class: its `\s` also takes U+180E, where Oniguruma's is
// Unicode's White_Space. The pattern is compiled with that class spelled
// out, so both split the same text the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEXT_SPLITPATTERN_H
#define LINNET_TEXT_SPLITPATTERN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace linnet {

class SplitPattern {
public:
  /// `regex` in Oniguruma's syntax, as tokenizer.json writes it. Errors say
  /// what PCRE2 found wrong and at which offset.
  static llvm::Expected<std::shared_ptr<SplitPattern>>
  compileRegex(llvm::StringRef regex);
  /// Matches any of `literals`; at a place where several match, the longest.
  static llvm::Expected<std::shared_ptr<SplitPattern>>
  compileLiterals(llvm::ArrayRef<std::string> literals);

  ~SplitPattern();
  SplitPattern(const SplitPattern &) = delete;
  SplitPattern &operator=(const SplitPattern &) = delete;

  /// Calls `onMatch(begin, end)` for each non-empty match in `text` (valid
  /// UTF-8), left to right, each search starting where the last match ended.
  llvm::Error
  forEachMatch(llvm::StringRef text,
               llvm::function_ref<llvm::Error(size_t, size_t)> onMatch) const;

  /// The pattern as PCRE2 compiled it.
  const std::string &source() const { return pcre2Source; }

private:
  SplitPattern() = default;
  static llvm::Expected<std::shared_ptr<SplitPattern>>
  compile(std::string pcre2Source, llvm::StringRef shownAs);

  void *code = nullptr; ///< pcre2_code_8
  std::string pcre2Source;
};

/// Whether `codepoint` has Unicode's White_Space property (what Oniguruma's
/// `\s` and Rust's char::is_whitespace take).
bool isUnicodeWhiteSpace(uint32_t codepoint);

} // namespace linnet

#endif // LINNET_TEXT_SPLITPATTERN_H

//===- Normalizer.h - Unicode normalization forms, through utf8proc -------===//
//
// tokenizer.json's `normalizer` for the byte-level models linnet reads is a
// Unicode normalization form (Qwen3.5: NFC), or a sequence of them.
// utf8proc implements them from the Unicode tables; ASCII text is its own
// normal form in all four and is passed through untouched.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEXT_NORMALIZER_H
#define LINNET_TEXT_NORMALIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace linnet {

enum class NormalForm { NFC, NFD, NFKC, NFKD };

/// The form named `name` as tokenizer.json spells it (`NFC`), if any.
std::optional<NormalForm> normalFormNamed(llvm::StringRef name);

class Normalizer {
public:
  explicit Normalizer(std::vector<NormalForm> forms)
      : forms(std::move(forms)) {}

  /// `text` (valid UTF-8) in each form in turn.
  llvm::Expected<std::string> apply(llvm::StringRef text) const;
  llvm::ArrayRef<NormalForm> steps() const { return forms; }

private:
  std::vector<NormalForm> forms;
};

} // namespace linnet

#endif // LINNET_TEXT_NORMALIZER_H

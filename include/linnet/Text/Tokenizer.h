//===- Tokenizer.h - A checkpoint's tokenizer.json, encoding and decoding -===//
//
// Text in and text out go through the tokenizer a Hugging Face checkpoint
// ships: `tokenizer.json`, the serialized pipeline of HF `tokenizers`.
// linnet implements the pipeline byte-level BPE models use (Qwen3.5/3.6,
// GPT-2, Llama 3): added tokens matched first, a Unicode normalizer, regex
// and byte-level pre-tokenizers, BPE by merge rank, byte-level decoding.
// Anything else in the file is refused by name when it is loaded, so that a
// tokenizer linnet cannot reproduce never gives different ids silently.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEXT_TOKENIZER_H
#define LINNET_TEXT_TOKENIZER_H

#include "linnet/Text/BytePairEncoding.h"
#include "linnet/Text/Normalizer.h"
#include "linnet/Text/SplitPattern.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// A token the file lists in `added_tokens`: matched in the text before
/// anything else, and never split.
struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  /// Matched in the normalized text (else in the text as given).
  bool normalized = false;
  /// The match takes the whitespace before (lstrip) or after (rstrip) it.
  bool lstrip = false, rstrip = false;
};

/// One step of the pre-tokenizer: a regex split, or the byte-level map
/// (with its optional GPT-2 split and prefix space).
struct PreTokenizerStep {
  enum class Kind { Split, ByteLevel } kind = Kind::Split;
  std::shared_ptr<const SplitPattern> pattern; ///< Split; ByteLevel with regex
  bool addPrefixSpace = false;                 ///< ByteLevel
};

class Tokenizer {
public:
  /// Reads `path` (a tokenizer.json). Errors name the file and the field.
  static llvm::Expected<Tokenizer> load(llvm::StringRef path);
  /// Reads `folder`/tokenizer.json (a checkpoint's, or a folder of tokenizer
  /// files); `folder` may name the file itself.
  static llvm::Expected<Tokenizer> loadFolder(llvm::StringRef folder);
  /// Reads a tokenizer.json already in memory; `path` is for messages.
  static llvm::Expected<Tokenizer> parse(llvm::StringRef text,
                                         llvm::StringRef path);

  /// The ids of `text`, which must be valid UTF-8 (an error names the
  /// offset of the first byte that is not). Added tokens in the text are
  /// matched as tokens.
  llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text) const;

  /// The bytes `ids` stand for (an error names an id outside the vocabulary).
  /// They are UTF-8 when the ids came from encode; a piece of a character
  /// is kept as bytes, for the caller to join (TextStream does).
  llvm::Expected<std::string> decodeBytes(llvm::ArrayRef<int32_t> ids) const;
  /// decodeBytes with each ill-formed UTF-8 sequence replaced by U+FFFD,
  /// as HF `tokenizers` decodes.
  llvm::Expected<std::string> decode(llvm::ArrayRef<int32_t> ids) const;

  /// One more than the largest id (vocabulary and added tokens).
  int32_t vocabularySize() const { return static_cast<int32_t>(bytes.size()); }
  /// The id of a token by its content (`<|im_end|>`), if there is one.
  std::optional<int32_t> tokenId(llvm::StringRef content) const;
  /// The bytes of one id; the id must be below vocabularySize().
  llvm::StringRef tokenBytes(int32_t id) const { return bytes[id]; }
  llvm::ArrayRef<AddedToken> addedTokens() const { return added; }
  const std::string &path() const { return file; }

private:
  /// Appends the ids of `piece` (no added tokens in it) from pre-tokenizer
  /// step `step` on.
  llvm::Error preTokenize(size_t step, llvm::StringRef piece,
                          std::vector<int32_t> &ids) const;
  /// Appends the ids of `text`: the matches of `tokens` as added tokens,
  /// what lies between through `between`.
  llvm::Error
  splitAdded(llvm::StringRef text, const SplitPattern &tokens,
             std::vector<int32_t> &ids,
             llvm::function_ref<llvm::Error(llvm::StringRef)> between) const;

  std::string file;
  std::vector<AddedToken> added;
  /// The added tokens matched in the raw text, and in the normalized text,
  /// as alternations (longest first) with the token of each alternative.
  std::shared_ptr<const SplitPattern> rawAdded, normalizedAdded;
  llvm::StringMap<size_t> addedByContent; ///< index into `added`
  std::optional<Normalizer> normalizer;
  std::vector<PreTokenizerStep> preTokenizer;
  std::shared_ptr<const BytePairEncoding> model;
  std::vector<std::string> bytes; ///< each id's decoded bytes
  llvm::StringMap<int32_t> idByContent;
};

/// Decodes ids one at a time to text: a character whose bytes are split
/// over several tokens comes out whole, once its last byte has come.
class TextStream {
public:
  explicit TextStream(const Tokenizer &tokenizer) : tokenizer(tokenizer) {}
  /// The text `id` completes (possibly empty).
  llvm::Expected<std::string> push(int32_t id);
  /// What is left at the end: an incomplete character, as U+FFFD.
  std::string finish();

private:
  const Tokenizer &tokenizer;
  std::string pending;
};

} // namespace linnet

#endif // LINNET_TEXT_TOKENIZER_H

//===- BytePairEncoding.h - A BPE model over bytes, by merge rank ---------===//
//
// The `model` of a byte-level tokenizer.json: a vocabulary of byte strings
// and a ranked list of merges. A word's bytes start as one token each and
// the adjacent pair of lowest rank is merged (the leftmost of equals) until
// no pair has a merge, which is what HF `tokenizers` computes. Words are
// cached, as text repeats them.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEXT_BYTEPAIRENCODING_H
#define LINNET_TEXT_BYTEPAIRENCODING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace linnet {

class BytePairEncoding {
public:
  /// A merge of two tokens into a third, by id.
  struct Merge {
    int32_t left, right, merged;
  };

  /// `tokens[id]` is each id's bytes (empty for an id the model does not
  /// have); `merges` in rank order. With `ignoreMerges` a word that is a
  /// token is that token whatever the merges would make of it.
  BytePairEncoding(const std::vector<std::string> &tokens,
                   llvm::ArrayRef<Merge> merges, bool ignoreMerges);

  /// Appends the ids of `word`'s bytes to `ids`; fails only for a byte the
  /// vocabulary has no token for.
  llvm::Error encode(llvm::StringRef word, std::vector<int32_t> &ids) const;

private:
  /// The merge of `left` and `right`: (rank << 32) | merged id, or ~0.
  uint64_t lookup(int32_t left, int32_t right) const;
  void encodeShort(llvm::SmallVectorImpl<int32_t> &symbols) const;
  void encodeLong(llvm::SmallVectorImpl<int32_t> &symbols) const;

  int32_t byteIds[256];
  /// Open addressing: keys (left << 32 | right), values as lookup's.
  std::vector<uint64_t> mergeKeys, mergeValues;
  unsigned mergeShift = 64;
  bool ignoreMerges = false;
  llvm::StringMap<int32_t> wholeTokens; ///< with ignoreMerges

  mutable std::mutex cacheMutex;
  mutable llvm::StringMap<std::vector<int32_t>> cache;
};

} // namespace linnet

#endif // LINNET_TEXT_BYTEPAIRENCODING_H

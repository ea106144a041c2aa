//===- BytePairEncoding.cpp - A BPE model over bytes, by merge rank -------===//
//
// Short words (most of them) keep the rank of each adjacent pair in an array
// and merge the lowest, looking up only the two pairs a merge changes; long
// ones (a run of spaces, a line of CJK) use a heap over a linked list, so
// that a word of n bytes costs O(n log n), not O(n^2).
//
//===----------------------------------------------------------------------===//

#include "linnet/Text/BytePairEncoding.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <queue>

using namespace linnet;

namespace {

constexpr uint64_t kNoMerge = ~uint64_t(0);
constexpr uint64_t kEmptyKey = ~uint64_t(0);
/// Words up to this many bytes take the array path and are cached.
constexpr size_t kShortWord = 128;
/// The cache starts afresh when it holds this many words.
constexpr size_t kCacheWords = 1 << 17;

uint64_t pairKey(int32_t left, int32_t right) {
  return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
}

} // namespace

BytePairEncoding::BytePairEncoding(const std::vector<std::string> &tokens,
                                   llvm::ArrayRef<Merge> merges,
                                   bool ignoreMerges)
    : ignoreMerges(ignoreMerges) {
  std::fill(std::begin(byteIds), std::end(byteIds), -1);
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].size() == 1)
      byteIds[static_cast<unsigned char>(tokens[id][0])] = int32_t(id);
    if (ignoreMerges && !tokens[id].empty())
      wholeTokens.try_emplace(tokens[id], int32_t(id));
  }
  size_t capacity = llvm::PowerOf2Ceil(std::max<size_t>(16, 2 * merges.size()));
  mergeShift = 64 - llvm::Log2_64(capacity);
  mergeKeys.assign(capacity, kEmptyKey);
  mergeValues.assign(capacity, kNoMerge);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    uint64_t key = pairKey(merges[rank].left, merges[rank].right);
    size_t slot = (key * 0x9E3779B97F4A7C15ull) >> mergeShift;
    while (mergeKeys[slot] != kEmptyKey && mergeKeys[slot] != key)
      slot = (slot + 1) & (capacity - 1);
    if (mergeKeys[slot] == key)
      continue; // a repeated merge keeps its first (lowest) rank
    mergeKeys[slot] = key;
    mergeValues[slot] = (uint64_t(rank) << 32) | uint32_t(merges[rank].merged);
  }
}

uint64_t BytePairEncoding::lookup(int32_t left, int32_t right) const {
  uint64_t key = pairKey(left, right);
  size_t mask = mergeKeys.size() - 1;
  for (size_t slot = (key * 0x9E3779B97F4A7C15ull) >> mergeShift;;
       slot = (slot + 1) & mask) {
    if (mergeKeys[slot] == key)
      return mergeValues[slot];
    if (mergeKeys[slot] == kEmptyKey)
      return kNoMerge;
  }
}

void BytePairEncoding::encodeShort(
    llvm::SmallVectorImpl<int32_t> &symbols) const {
  llvm::SmallVector<uint64_t, kShortWord> pairs;
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    pairs.push_back(lookup(symbols[i], symbols[i + 1]));
  while (!pairs.empty()) {
    size_t best = 0;
    for (size_t i = 1; i < pairs.size(); ++i)
      if (pairs[i] < pairs[best]) // ranks compare first; ties go left
        best = i;
    if (pairs[best] == kNoMerge)
      break;
    symbols[best] = int32_t(uint32_t(pairs[best]));
    symbols.erase(symbols.begin() + best + 1);
    pairs.erase(pairs.begin() + best);
    if (best < pairs.size())
      pairs[best] = lookup(symbols[best], symbols[best + 1]);
    if (best > 0)
      pairs[best - 1] = lookup(symbols[best - 1], symbols[best]);
  }
}

void BytePairEncoding::encodeLong(
    llvm::SmallVectorImpl<int32_t> &symbols) const {
  size_t n = symbols.size();
  std::vector<int32_t> previous(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    previous[i] = int32_t(i) - 1;
    next[i] = i + 1 < n ? int32_t(i + 1) : -1;
  }
  // (rank, position): the lowest rank first, the leftmost of equal ranks.
  using Candidate = std::pair<uint64_t, int32_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto offer = [&](int32_t at) {
    if (at < 0 || next[at] < 0)
      return;
    uint64_t merge = lookup(symbols[at], symbols[next[at]]);
    if (merge != kNoMerge)
      heap.emplace(merge >> 32, at);
  };
  for (size_t i = 0; i + 1 < n; ++i)
    offer(int32_t(i));
  while (!heap.empty()) {
    auto [rank, at] = heap.top();
    heap.pop();
    // Stale when a neighbour has merged since: the pair is no longer there.
    if (!alive[at] || next[at] < 0)
      continue;
    uint64_t merge = lookup(symbols[at], symbols[next[at]]);
    if (merge == kNoMerge || (merge >> 32) != rank)
      continue;
    int32_t gone = next[at];
    symbols[at] = int32_t(uint32_t(merge));
    alive[gone] = false;
    next[at] = next[gone];
    if (next[at] >= 0)
      previous[next[at]] = at;
    offer(previous[at]);
    offer(at);
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i)
    if (alive[i])
      symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

llvm::Error BytePairEncoding::encode(llvm::StringRef word,
                                     std::vector<int32_t> &ids) const {
  if (word.empty())
    return llvm::Error::success();
  if (ignoreMerges) {
    auto whole = wholeTokens.find(word);
    if (whole != wholeTokens.end()) {
      ids.push_back(whole->second);
      return llvm::Error::success();
    }
  }
  bool cached = word.size() <= kShortWord;
  if (cached) {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto hit = cache.find(word);
    if (hit != cache.end()) {
      ids.insert(ids.end(), hit->second.begin(), hit->second.end());
      return llvm::Error::success();
    }
  }
  llvm::SmallVector<int32_t, kShortWord> symbols;
  for (unsigned char byte : word) {
    if (byteIds[byte] < 0) {
      std::string shown;
      llvm::raw_string_ostream(shown) << llvm::format_hex(byte, 4);
      return makeError(ErrorId::TextUnencodable,
                       "the vocabulary has no token for the byte " + shown +
                           ", and the merges start from single bytes");
    }
    symbols.push_back(byteIds[byte]);
  }
  if (cached)
    encodeShort(symbols);
  else
    encodeLong(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  if (cached) {
    std::lock_guard<std::mutex> lock(cacheMutex);
    if (cache.size() >= kCacheWords)
      cache.clear();
    cache.try_emplace(word, symbols.begin(), symbols.end());
  }
  return llvm::Error::success();
}

//===- PrefixCache.cpp - Snapshots of state rows keyed by their tokens ----===//
//
// Lookups try each cached length, longest first, hashing that prefix of the
// prompt; a hash match is confirmed token by token, so a collision costs a
// comparison, never a wrong state.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/PrefixCache.h"

#include "llvm/Support/xxhash.h"

using namespace linnet;
using namespace linnet::serve;

uint64_t PrefixCache::hashOf(llvm::ArrayRef<int32_t> tokens) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(tokens.data()),
                              tokens.size() * sizeof(int32_t)));
}

PrefixCache::Order::iterator
PrefixCache::find(llvm::ArrayRef<int32_t> tokens) const {
  auto [first, last] = byKey.equal_range(hashOf(tokens));
  for (auto it = first; it != last; ++it)
    if (llvm::ArrayRef<int32_t>(it->second->tokens) == tokens)
      return it->second;
  return order.end();
}

bool PrefixCache::contains(llvm::ArrayRef<int32_t> tokens) const {
  return enabled() && find(tokens) != order.end();
}

const RowSnapshot *PrefixCache::lookup(llvm::ArrayRef<int32_t> tokens,
                                       size_t maxRest) {
  for (auto it = lengths.rbegin(); it != lengths.rend(); ++it) {
    size_t length = it->first;
    if (length >= tokens.size())
      continue;
    if (tokens.size() - length > maxRest)
      break;
    auto found = find(tokens.take_front(length));
    if (found == order.end())
      continue;
    order.splice(order.begin(), order, found);
    return &found->snapshot;
  }
  return nullptr;
}

void PrefixCache::insert(llvm::ArrayRef<int32_t> tokens, RowSnapshot snapshot) {
  uint64_t bytes = snapshot.bytes();
  if (!enabled() || bytes > capacity || find(tokens) != order.end())
    return;
  while (used + bytes > capacity && !order.empty()) {
    Entry &oldest = order.back();
    auto [first, last] = byKey.equal_range(hashOf(oldest.tokens));
    for (auto it = first; it != last; ++it)
      if (&*it->second == &oldest) {
        byKey.erase(it);
        break;
      }
    if (--lengths[oldest.tokens.size()] == 0)
      lengths.erase(oldest.tokens.size());
    used -= oldest.snapshot.bytes();
    order.pop_back();
  }
  order.push_front(Entry{tokens.vec(), std::move(snapshot)});
  byKey.emplace(hashOf(tokens), order.begin());
  ++lengths[tokens.size()];
  used += bytes;
}

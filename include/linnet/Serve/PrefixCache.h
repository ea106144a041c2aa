//===- PrefixCache.h - State snapshots keyed by their tokens ----*- C++ -*-===//
//
// A hybrid model's DeltaNet rows carry a recurrent state that cannot be
// rewound, so a prefix cache cannot share KV blocks as attention-only
// servers do: it keeps whole copies of a row's state (conv history,
// recurrent state, KV cache, token count) taken at chosen token boundaries,
// keyed by a hash of the tokens before the boundary. A request whose
// prompt starts with those tokens restores the copy into its slot and feeds
// only the rest. Memory is bounded; the least recently used copy goes
// first.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_PREFIXCACHE_H
#define LINNET_SERVE_PREFIXCACHE_H

#include "linnet/Runtime/Session.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace linnet::serve {

class PrefixCache {
public:
  explicit PrefixCache(uint64_t capacityBytes) : capacity(capacityBytes) {}

  bool enabled() const { return capacity > 0; }
  /// The snapshot of the longest cached prefix of `tokens` that leaves at
  /// least one token of `tokens` to feed (the logits come from it) and at
  /// most `maxRest`, or null.
  const RowSnapshot *lookup(llvm::ArrayRef<int32_t> tokens, size_t maxRest);
  /// Whether the state after exactly `tokens` is cached.
  bool contains(llvm::ArrayRef<int32_t> tokens) const;
  /// Keeps `snapshot`, the state after `tokens`, evicting the least
  /// recently used snapshots to stay within the capacity (one larger than
  /// the whole capacity is not kept).
  void insert(llvm::ArrayRef<int32_t> tokens, RowSnapshot snapshot);

  uint64_t bytes() const { return used; }
  size_t entries() const { return byKey.size(); }

private:
  struct Entry {
    std::vector<int32_t> tokens;
    RowSnapshot snapshot;
  };
  using Order = std::list<Entry>;
  static uint64_t hashOf(llvm::ArrayRef<int32_t> tokens);
  Order::iterator find(llvm::ArrayRef<int32_t> tokens) const;

  uint64_t capacity;
  uint64_t used = 0;
  /// Most recently used first.
  mutable Order order;
  std::unordered_multimap<uint64_t, Order::iterator> byKey;
  /// How many entries have each length: the lengths a lookup tries.
  std::map<size_t, size_t> lengths;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_PREFIXCACHE_H

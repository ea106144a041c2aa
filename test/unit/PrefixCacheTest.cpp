//===- PrefixCacheTest.cpp - State snapshots keyed by their tokens --------===//
//
// The longest cached prefix is found, never the whole prompt (its last
// token's logits must come from a step), never a rest longer than asked;
// memory stays within the capacity, the least recently used going first.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/PrefixCache.h"

#include <gtest/gtest.h>

using namespace linnet;
using namespace linnet::serve;

namespace {

RowSnapshot snapshotOf(int64_t count, size_t bytes) {
  RowSnapshot snapshot;
  snapshot.count = count;
  snapshot.states.push_back(std::vector<char>(bytes, char(count)));
  return snapshot;
}

TEST(PrefixCache, FindsTheLongestPrefixThatLeavesATokenToFeed) {
  PrefixCache cache(1 << 20);
  cache.insert({1, 2}, snapshotOf(2, 10));
  cache.insert({1, 2, 3, 4}, snapshotOf(4, 10));
  cache.insert({1, 2, 3, 4, 5}, snapshotOf(5, 10));
  const RowSnapshot *found = cache.lookup({1, 2, 3, 4, 5}, 100);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->count, 4); // not the whole prompt
  found = cache.lookup({1, 2, 3, 9, 9}, 100);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->count, 2);
  EXPECT_FALSE(cache.lookup({7, 1, 2, 3}, 100));
  // A rest longer than allowed is no hit.
  EXPECT_FALSE(cache.lookup({1, 2, 9, 9, 9, 9}, 3));
  EXPECT_TRUE(cache.contains({1, 2, 3, 4}));
  EXPECT_FALSE(cache.contains({1, 2, 3}));
}

TEST(PrefixCache, EvictsTheLeastRecentlyUsedWithinItsCapacity) {
  PrefixCache cache(30);
  cache.insert({1}, snapshotOf(1, 10));
  cache.insert({2}, snapshotOf(1, 10));
  cache.insert({3}, snapshotOf(1, 10));
  EXPECT_TRUE(cache.lookup({1, 0}, 10)); // {1} is now the most recent
  cache.insert({4}, snapshotOf(1, 10));
  EXPECT_TRUE(cache.contains({1}));
  EXPECT_FALSE(cache.contains({2}));
  EXPECT_TRUE(cache.contains({3}));
  EXPECT_TRUE(cache.contains({4}));
  EXPECT_EQ(cache.bytes(), 30u);
  EXPECT_EQ(cache.entries(), 3u);
  // Larger than the whole capacity: not kept, nothing evicted.
  cache.insert({5}, snapshotOf(1, 31));
  EXPECT_FALSE(cache.contains({5}));
  EXPECT_EQ(cache.entries(), 3u);
}

TEST(PrefixCache, ADisabledCacheHoldsNothing) {
  PrefixCache cache(0);
  cache.insert({1}, snapshotOf(1, 1));
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.contains({1}));
  EXPECT_FALSE(cache.lookup({1, 2}, 10));
}

} // namespace

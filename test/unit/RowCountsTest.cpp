//===- RowCountsTest.cpp - Free rows and restored rows of a session -------===//
//
// A server's free slots ride along in `decode_rows` at any position without
// holding tokens; a snapshot restored into a slot makes it continue at the
// snapshot's count; `prefill_slots` starts a sequence in a free slot.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Session.h"

#include <gtest/gtest.h>

using namespace linnet;

namespace {

EntryCall decodeRows(std::vector<int32_t> positions) {
  EntryCall call;
  call.entry = EntryKind::DecodeRows;
  call.rows = int64_t(positions.size());
  call.length = 1;
  call.tokens.assign(positions.size(), 1);
  call.positions = std::move(positions);
  return call;
}

TEST(RowCounts, FreeRowsStepAnywhereAndHoldNothing) {
  RowCounts rows({/*batch=*/3, /*maxSeq=*/8, /*vocab=*/16});
  rows.release(1);
  rows.release(2);
  EntryCall step = decodeRows({0, 5, 0});
  ASSERT_FALSE(llvm::errorToBool(rows.check(step)));
  rows.advance(step);
  EXPECT_EQ(rows.counts()[0], 1);
  EXPECT_EQ(rows.counts()[1], 0);
  EXPECT_TRUE(rows.isFree(1));
  // A row in use must still continue where it stopped.
  EXPECT_TRUE(llvm::errorToBool(rows.check(decodeRows({0, 0, 0}))));
  // Past the cache is refused, free or not.
  EXPECT_TRUE(llvm::errorToBool(rows.check(decodeRows({1, 8, 0}))));
}

TEST(RowCounts, RestoredAndPrefilledRowsAreInUse) {
  RowCounts rows({/*batch=*/2, /*maxSeq=*/8, /*vocab=*/16});
  rows.release(0);
  rows.release(1);
  rows.restore(0, 4);
  EXPECT_FALSE(rows.isFree(0));
  EXPECT_TRUE(llvm::errorToBool(rows.check(decodeRows({0, 0}))));
  ASSERT_FALSE(llvm::errorToBool(rows.check(decodeRows({4, 0}))));
  EntryCall prefill;
  prefill.entry = EntryKind::PrefillSlots;
  prefill.rows = 1;
  prefill.length = 3;
  prefill.tokens = {1, 2, 3};
  prefill.slots = {1};
  prefill.lengths = {2};
  ASSERT_FALSE(llvm::errorToBool(rows.check(prefill)));
  rows.advance(prefill);
  EXPECT_FALSE(rows.isFree(1));
  EXPECT_EQ(rows.counts()[1], 2);
}

} // namespace

//===- SessionRowsTest.cpp - Free, restored and snapshotted session rows --===//
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

/// `prefill_slots` of a row of 3 tokens, `length` of them real, in `slot`.
EntryCall prefillSlot(int32_t slot, int32_t length) {
  EntryCall call;
  call.entry = EntryKind::PrefillSlots;
  call.rows = 1;
  call.length = 3;
  call.tokens = {1, 2, 3};
  call.slots = {slot};
  call.lengths = {length};
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
  EntryCall prefill = prefillSlot(1, 2);
  ASSERT_FALSE(llvm::errorToBool(rows.check(prefill)));
  rows.advance(prefill);
  EXPECT_FALSE(rows.isFree(1));
  EXPECT_EQ(rows.counts()[1], 2);
}

TEST(Session, ASnapshotKeepsTheCachedPositionsInUse) {
  SessionSizes sizes{/*batch=*/2, /*maxSeq=*/5, /*vocab=*/16};
  ModelParameter cache, state;
  cache.path = "cache";
  cache.shape = {2, 2, 5, 3}; // [Batch, heads, MaxSeq, width]
  cache.contextAxis = 2;
  state.path = "state";
  state.shape = {2, 4};
  auto session = Session::create(sizes, {cache, state});
  ASSERT_TRUE(bool(session)) << llvm::toString(session.takeError());
  auto values = [&](size_t index) {
    return static_cast<float *>((*session)->states()[index].data);
  };
  constexpr int kRow = 2 * 5 * 3;
  for (int i = 0; i < 2 * kRow; ++i)
    values(0)[i] = float(i);
  for (int i = 0; i < 2 * 4; ++i)
    values(1)[i] = float(100 + i);
  // Slot 1 holds 3 tokens.
  (*session)->finish(prefillSlot(1, 3));
  RowSnapshot kept = (*session)->snapshot(1);
  EXPECT_EQ(kept.count, 3);
  EXPECT_EQ(kept.states[0].size(), 2u * 3 * 3 * sizeof(float));
  EXPECT_EQ(kept.states[1].size(), 4u * sizeof(float));
  // Into slot 0: its positions 0..2 of each head and its whole state
  // become slot 1's; positions 3 and 4 keep what they held.
  (*session)->restore(0, kept);
  EXPECT_EQ((*session)->counts()[0], 3);
  for (int head = 0; head < 2; ++head)
    for (int position = 0; position < 5; ++position)
      for (int i = 0; i < 3; ++i) {
        int at = (head * 5 + position) * 3 + i;
        float expected = position < 3 ? float(kRow + at) : float(at);
        EXPECT_EQ(values(0)[at], expected) << head << " " << position;
      }
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(values(1)[i], 104.0f + i);
}

} // namespace

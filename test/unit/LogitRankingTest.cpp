//===- LogitRankingTest.cpp - largestLogits is a total order --------------===//
//
// `--top` ranks logits with largestLogits; with a NaN
// among them a comparator that is not a strict weak order scrambles the
// ranking, so these cases pin the order: larger first, ties to the lower
// id, NaN after every number.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/ModelRun.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace linnet;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(LogitRanking, LargerFirstTiesToLowerId) {
  float row[] = {1, 3, 2, 3, -1};
  EXPECT_EQ(largestLogits(row, 5, 5), (std::vector<int64_t>{1, 3, 2, 0, 4}));
  EXPECT_EQ(largestLogits(row, 5, 2), (std::vector<int64_t>{1, 3}));
}

TEST(LogitRanking, NaNAfterEveryNumber) {
  float row[] = {kNaN, 0.5f, kNaN, -kInf, 2, kNaN, kInf, 1};
  EXPECT_EQ(largestLogits(row, 8, 8),
            (std::vector<int64_t>{6, 4, 7, 1, 3, 0, 2, 5}));
  EXPECT_EQ(largestLogits(row, 8, 1), (std::vector<int64_t>{6}));
}

TEST(LogitRanking, AllNaNKeepsIdOrder) {
  std::vector<float> row(300, kNaN);
  std::vector<int64_t> order = largestLogits(row.data(), 300, 300);
  for (int64_t i = 0; i < 300; ++i)
    EXPECT_EQ(order[size_t(i)], i);
}

TEST(LogitRanking, CountBeyondWidth) {
  float row[] = {0, 1};
  EXPECT_EQ(largestLogits(row, 2, 10), (std::vector<int64_t>{1, 0}));
}

} // namespace

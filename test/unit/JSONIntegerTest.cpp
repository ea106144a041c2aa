//===- JSONIntegerTest.cpp - jsonInteger at the edges of int64 ------------===//
//
// Every JSON integer linnet reads goes through jsonInteger, because
// llvm::json's getAsInteger converts a double of exactly 2^63 out of range.
// These cases pin what is an integer: integral numbers of int64, written as
// integers or as doubles; not fractions, not numbers from 2^63 up.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/JSON.h"

#include <gtest/gtest.h>

#include <limits>

using namespace linnet;

namespace {

std::optional<int64_t> integerOf(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> value = parseJSON(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  return jsonInteger(*value);
}

TEST(JSONInteger, IntegersAndIntegralDoubles) {
  EXPECT_EQ(integerOf("7"), 7);
  EXPECT_EQ(integerOf("-3"), -3);
  EXPECT_EQ(integerOf("4.0"), 4);
  EXPECT_EQ(integerOf("1e3"), 1000);
  EXPECT_EQ(integerOf("-9223372036854775808"),
            std::numeric_limits<int64_t>::min());
}

TEST(JSONInteger, FractionsAndOtherKindsAreNot) {
  EXPECT_EQ(integerOf("2.5"), std::nullopt);
  EXPECT_EQ(integerOf("\"3\""), std::nullopt);
  EXPECT_EQ(integerOf("[3]"), std::nullopt);
  EXPECT_EQ(integerOf("null"), std::nullopt);
}

TEST(JSONInteger, TwoTo63AndAboveAreOutOfRange) {
  // getAsInteger would take this double as in range (undefined behaviour).
  EXPECT_EQ(integerOf("9223372036854775808.0"), std::nullopt);
  EXPECT_EQ(integerOf("9223372036854775807."), std::nullopt);
  EXPECT_EQ(integerOf("18446744073709551615"), std::nullopt);
  EXPECT_EQ(integerOf("1e300"), std::nullopt);
  EXPECT_EQ(integerOf("-1e300"), std::nullopt);
}

} // namespace

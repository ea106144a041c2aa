//===- StopStringsTest.cpp - Stop strings split over tokens ---------------===//
//
// Generated text arrives a token at a time; a stop string split over
// tokens must still end it, and text that only looked like the start of
// one must come out unchanged.
//
//===----------------------------------------------------------------------===//

#include "linnet/Text/StopStrings.h"

#include <gtest/gtest.h>

using namespace linnet;

namespace {

/// The printed text when `pieces` arrive one at a time.
std::string run(StopStringMatcher &matcher,
                const std::vector<std::string> &pieces) {
  std::string out;
  for (const std::string &piece : pieces) {
    out += matcher.push(piece);
    if (matcher.stopped())
      return out;
  }
  return out + matcher.finish();
}

TEST(StopStrings, AStopStringSplitOverTokensEndsTheText) {
  StopStringMatcher matcher({"</answer>"});
  EXPECT_EQ(run(matcher, {"42 is it", "</ans", "wer>", " more"}), "42 is it");
  EXPECT_TRUE(matcher.stopped());
  EXPECT_EQ(matcher.matched(), "</answer>");
  EXPECT_EQ(matcher.push("later"), "");
}

TEST(StopStrings, TextThatOnlyLookedLikeAStopStringComesOut) {
  StopStringMatcher matcher({"</answer>"});
  std::string first = matcher.push("a </an");
  EXPECT_EQ(first, "a "); // `</an` is held back
  EXPECT_EQ(first + matcher.push("d b <") + matcher.finish(), "a </and b <");
  EXPECT_FALSE(matcher.stopped());
}

TEST(StopStrings, TheEarliestOfSeveralWins) {
  StopStringMatcher matcher({"world", "lo w"});
  EXPECT_EQ(run(matcher, {"hel", "lo wor", "ld"}), "hel");
  EXPECT_EQ(matcher.matched(), "lo w");
}

TEST(StopStrings, AStopStringInsideOneToken) {
  StopStringMatcher matcher({"\n\n"});
  EXPECT_EQ(run(matcher, {"one\n\ntwo"}), "one");
  StopStringMatcher none({"x"});
  EXPECT_EQ(run(none, {"abc", "def"}), "abcdef");
}

} // namespace

//===- SamplerTest.cpp - The sampler's processors and draws ---------------===//
//
// Each processor against probabilities worked out here from its definition
// (transformers' logits processors, OpenAI's penalties), the processors
// together in transformers' order, and the draws: reproducible for a seed,
// and distributed as distribution() says.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

using namespace linnet;

namespace {

/// softmax(logits / temperature) over the ids `kept`, as id -> probability.
std::map<int32_t, double> softmax(const std::vector<float> &logits,
                                  const std::vector<int32_t> &kept,
                                  double temperature = 1) {
  std::map<int32_t, double> p;
  double sum = 0;
  for (int32_t id : kept)
    sum += p[id] = std::exp(logits[size_t(id)] / temperature);
  for (auto &[id, value] : p)
    value /= sum;
  return p;
}

void expectDistribution(const std::vector<TokenProbability> &got,
                        const std::map<int32_t, double> &expected) {
  ASSERT_EQ(got.size(), expected.size());
  double previous = 2;
  for (const TokenProbability &token : got) {
    ASSERT_TRUE(expected.count(token.id)) << "token " << token.id;
    EXPECT_NEAR(token.probability, expected.at(token.id), 1e-12)
        << "token " << token.id;
    EXPECT_LE(token.probability, previous) << "most likely first";
    previous = token.probability;
  }
}

const std::vector<float> kLogits = {1.0f, 3.0f, 2.0f, 0.5f, 3.0f, -1.0f};

TEST(Sampler, GreedyTakesTheLargestLogitLowestIdOnATie) {
  Sampler sampler(SamplingOptions{});
  auto got = sampler.distribution(kLogits.data(), 6, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, 1);
  EXPECT_EQ(sampler.sample(kLogits.data(), 6, {}), 1);
}

TEST(Sampler, TemperatureScalesTheLogits) {
  SamplingOptions options;
  options.temperature = 0.7;
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {0, 1, 2, 3, 4, 5}, 0.7));
}

TEST(Sampler, TopKKeepsTiesWithTheKth) {
  SamplingOptions options;
  options.temperature = 1;
  options.topK = 1; // ids 1 and 4 tie at 3.0
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {1, 4}));
  options.topK = 3;
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {1, 4, 2}));
}

TEST(Sampler, TopPDropsTheTailUpToOneMinusP) {
  // Probabilities of {1, 4, 2, 0, 3, 5}: .3289 .3289 .1210 .0445 .0270
  // .0060; the tail 5, 3, 0 adds up to .0775, with 2 to .1985.
  SamplingOptions options;
  options.temperature = 1;
  options.topP = 0.9; // drops a tail of at most 0.1: ids 5, 3, 0
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {1, 4, 2}));
  options.topP = 0.5; // at most 0.5: 2 too, not 4 (0.527)
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {1, 4}));
  options.topP = 1e-9; // one token is always kept
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     {{1, 1.0}});
}

TEST(Sampler, MinPDropsTokensLessLikelyThanMinPTimesTheTop) {
  SamplingOptions options;
  options.temperature = 1;
  options.minP = 0.2; // e^(x - 3) >= 0.2: x >= 3 + ln 0.2 = 1.39
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {}),
                     softmax(kLogits, {1, 4, 2}));
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegative) {
  SamplingOptions options;
  options.temperature = 1;
  options.repetitionPenalty = 2;
  // ids 1 (3.0 -> 1.5) and 5 (-1.0 -> -2.0) seen, 1 twice: once counts.
  std::vector<float> penalized = kLogits;
  penalized[1] = 1.5f;
  penalized[5] = -2.0f;
  expectDistribution(
      Sampler(options).distribution(kLogits.data(), 6, {1, 5, 1}),
      softmax(penalized, {0, 1, 2, 3, 4, 5}));
}

TEST(Sampler, PresenceOnceAndFrequencyPerOccurrence) {
  SamplingOptions options;
  options.temperature = 1;
  options.presencePenalty = 0.5;
  options.frequencyPenalty = 0.25;
  std::vector<float> penalized = kLogits;
  penalized[4] -= 0.5f + 3 * 0.25f; // seen three times
  penalized[0] -= 0.5f + 0.25f;
  expectDistribution(
      Sampler(options).distribution(kLogits.data(), 6, {4, 0, 4, 4}),
      softmax(penalized, {0, 1, 2, 3, 4, 5}));
}

TEST(Sampler, ProcessorsApplyInTransformersOrder) {
  // Repetition penalty, temperature, top-k, top-p, min-p.
  SamplingOptions options;
  options.repetitionPenalty = 1.5; // id 4: 3.0 -> 2.0
  options.temperature = 0.5;       // logits doubled
  options.topK = 4;                // 1 (6), 4 (4), 2 (4), 0 (2)
  options.topP = 0.95;             // drops 0 (p = .0132 <= .05)
  options.minP = 0.1;              // keeps 4 and 2 (p/p1 = e^-2 = .135)
  std::vector<float> penalized = kLogits;
  penalized[4] = 2.0f;
  expectDistribution(Sampler(options).distribution(kLogits.data(), 6, {4}),
                     softmax(penalized, {1, 4, 2}, 0.5));
}

TEST(Sampler, ASeedGivesTheSameDrawsAndTheDrawsFollowTheDistribution) {
  SamplingOptions options;
  options.temperature = 1;
  options.seed = 42;
  Sampler first(options), second(options);
  std::vector<int32_t> a, b;
  for (int i = 0; i < 64; ++i) {
    a.push_back(first.sample(kLogits.data(), 6, {}));
    b.push_back(second.sample(kLogits.data(), 6, {}));
  }
  EXPECT_EQ(a, b);
  options.seed = 43;
  Sampler other(options);
  std::vector<int32_t> c;
  for (int i = 0; i < 64; ++i)
    c.push_back(other.sample(kLogits.data(), 6, {}));
  EXPECT_NE(a, c);

  // 200,000 draws: each frequency within 5 standard deviations.
  Sampler counter(options);
  std::map<int32_t, double> expected = softmax(kLogits, {0, 1, 2, 3, 4, 5});
  std::map<int32_t, int> counts;
  const int draws = 200000;
  for (int i = 0; i < draws; ++i)
    ++counts[counter.sample(kLogits.data(), 6, {})];
  for (auto [id, p] : expected) {
    double sigma = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(double(counts[id]) / draws, p, 5 * sigma) << "token " << id;
  }
}

TEST(Sampler, OptionsOutOfRangeAreRefusedByName) {
  auto message = [](SamplingOptions options) {
    llvm::Error error = options.validate();
    return error ? llvm::toString(std::move(error)) : std::string();
  };
  EXPECT_EQ(message(SamplingOptions{}), "");
  SamplingOptions options;
  options.temperature = -1;
  EXPECT_NE(message(options).find("--temperature"), std::string::npos);
  options = {};
  options.topP = 0;
  EXPECT_NE(message(options).find("--top-p"), std::string::npos);
  options = {};
  options.minP = 1.5;
  EXPECT_NE(message(options).find("--min-p"), std::string::npos);
  options = {};
  options.repetitionPenalty = 0;
  EXPECT_NE(message(options).find("--repetition-penalty"), std::string::npos);
  options = {};
  options.presencePenalty = 3;
  EXPECT_NE(message(options).find("--presence-penalty"), std::string::npos);
  options = {};
  options.topK = -2;
  EXPECT_NE(message(options).find("--top-k"), std::string::npos);
}

} // namespace

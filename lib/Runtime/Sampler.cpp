//===- Sampler.cpp - Choosing the next token from a row of logits ---------===//

#include "linnet/Runtime/Sampler.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace linnet;

namespace {
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}
} // namespace

llvm::Error SamplingOptions::validate(bool asFields, ErrorId id) const {
  // Each value's name on the command line and in JSON.
  auto name = [&](llvm::StringRef flag, llvm::StringRef field) {
    return asFields ? "`" + field.str() + "`" : flag.str();
  };
  auto invalid = [&](const llvm::Twine &message) {
    return makeError(id, message);
  };
  if (!std::isfinite(temperature) || temperature < 0)
    return invalid(name("--temperature", "temperature") + ": " +
                   number(temperature) +
                   " is not a temperature; give 0 (greedy) or more");
  if (topK < 0)
    return invalid(name("--top-k", "top_k") + ": " + llvm::Twine(topK) +
                   " is negative; give 0 (every token) or more");
  if (!(topP > 0 && topP <= 1))
    return invalid(name("--top-p", "top_p") + ": " + number(topP) +
                   " is not a probability above 0 and at most 1");
  if (!(minP >= 0 && minP <= 1))
    return invalid(name("--min-p", "min_p") + ": " + number(minP) +
                   " is not a probability from 0 to 1");
  if (!(std::isfinite(repetitionPenalty) && repetitionPenalty > 0))
    return invalid(name("--repetition-penalty", "repetition_penalty") + ": " +
                   number(repetitionPenalty) +
                   " is not a positive number (1: none)");
  if (!(presencePenalty >= -2 && presencePenalty <= 2))
    return invalid(name("--presence-penalty", "presence_penalty") + ": " +
                   number(presencePenalty) + " is outside -2 to 2");
  if (!(frequencyPenalty >= -2 && frequencyPenalty <= 2))
    return invalid(name("--frequency-penalty", "frequency_penalty") + ": " +
                   number(frequencyPenalty) + " is outside -2 to 2");
  return llvm::Error::success();
}

bool SamplingOverrides::any() const {
  return temperature || topP || minP || repetitionPenalty || presencePenalty ||
         frequencyPenalty || topK || seed;
}

SamplingOptions SamplingOverrides::over(SamplingOptions defaults) const {
  defaults.temperature = temperature.value_or(defaults.temperature);
  defaults.topK = topK.value_or(defaults.topK);
  defaults.topP = topP.value_or(defaults.topP);
  defaults.minP = minP.value_or(defaults.minP);
  defaults.repetitionPenalty =
      repetitionPenalty.value_or(defaults.repetitionPenalty);
  defaults.presencePenalty = presencePenalty.value_or(defaults.presencePenalty);
  defaults.frequencyPenalty =
      frequencyPenalty.value_or(defaults.frequencyPenalty);
  defaults.seed = seed.value_or(defaults.seed);
  return defaults;
}

std::vector<TokenProbability>
Sampler::distribution(const float *logits, int64_t vocab,
                      llvm::ArrayRef<int32_t> history) const {
  constexpr double kRemoved = -std::numeric_limits<double>::infinity();
  std::vector<double> scores(logits, logits + vocab);
  // The runtime refuses non-finite logits; a NaN here would still break
  // the ordering, so it ranks last.
  for (double &score : scores)
    if (std::isnan(score))
      score = kRemoved;
  // Penalties on the tokens seen.
  llvm::DenseMap<int32_t, int64_t> seen;
  for (int32_t id : history)
    if (id >= 0 && id < vocab)
      ++seen[id];
  for (auto [id, count] : seen) {
    double &score = scores[size_t(id)];
    if (options_.repetitionPenalty != 1)
      score = score < 0 ? score * options_.repetitionPenalty
                        : score / options_.repetitionPenalty;
    score -=
        options_.presencePenalty + options_.frequencyPenalty * double(count);
  }
  auto moreLikely = [&](int32_t a, int32_t b) {
    return scores[size_t(a)] != scores[size_t(b)]
               ? scores[size_t(a)] > scores[size_t(b)]
               : a < b;
  };
  if (options_.greedy()) {
    int32_t best = 0;
    for (int32_t id = 1; id < vocab; ++id)
      if (moreLikely(id, best))
        best = id;
    return {{best, 1.0}};
  }
  for (double &score : scores)
    score /= options_.temperature;
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  for (int32_t id = 0; id < vocab; ++id)
    order[size_t(id)] = id;
  // top-k keeps every token tied with the k-th, as transformers' does; it
  // is found by selection, so that only those are sorted, not the whole
  // vocabulary.
  if (options_.topK > 0 && size_t(options_.topK) < order.size()) {
    auto kth = order.begin() + (options_.topK - 1);
    std::nth_element(order.begin(), kth, order.end(), moreLikely);
    double threshold = scores[size_t(*kth)];
    order.erase(std::partition(order.begin(), order.end(),
                               [&](int32_t id) {
                                 return scores[size_t(id)] >= threshold;
                               }),
                order.end());
  }
  // The candidates, most likely first (moreLikely is a total order).
  std::sort(order.begin(), order.end(), moreLikely);
  size_t kept = order.size();
  auto probabilities = [&] {
    double top = scores[size_t(order[0])], sum = 0;
    std::vector<double> p(kept);
    for (size_t i = 0; i < kept; ++i)
      sum += p[i] = scores[size_t(order[i])] == top
                        ? 1.0
                        : std::exp(scores[size_t(order[i])] - top);
    for (double &value : p)
      value /= sum;
    return p;
  };
  // top-p drops the least likely tokens whose probabilities add up to at
  // most 1 - p, keeping one at least.
  if (options_.topP < 1) {
    std::vector<double> p = probabilities();
    double tail = 0;
    while (kept > 1 && tail + p[kept - 1] <= 1 - options_.topP) {
      tail += p[kept - 1];
      --kept;
    }
  }
  if (options_.minP > 0) {
    std::vector<double> p = probabilities();
    double floor = options_.minP * p[0];
    while (kept > 1 && p[kept - 1] < floor)
      --kept;
  }
  std::vector<double> p = probabilities();
  std::vector<TokenProbability> result;
  result.reserve(kept);
  for (size_t i = 0; i < kept; ++i)
    if (scores[size_t(order[i])] != kRemoved)
      result.push_back({order[i], p[i]});
  return result;
}

int32_t Sampler::sample(const float *logits, int64_t vocab,
                        llvm::ArrayRef<int32_t> history) {
  std::vector<TokenProbability> candidates =
      distribution(logits, vocab, history);
  if (candidates.size() == 1)
    return candidates[0].id;
  // 53 random bits as a double in [0, 1), the same on every machine.
  double draw = double(random() >> 11) * 0x1.0p-53;
  double cumulative = 0;
  for (const TokenProbability &candidate : candidates) {
    cumulative += candidate.probability;
    if (draw < cumulative)
      return candidate.id;
  }
  return candidates.back().id;
}

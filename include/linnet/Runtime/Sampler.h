//===- Sampler.h - Choosing the next token from a row of logits -*- C++ -*-===//
//
// Sampling as Hugging Face transformers' generate applies its logits
// processors, in its order: the repetition penalty (a seen token's logit
// divided by it when positive, multiplied when negative), presence and
// frequency penalties (OpenAI's: subtracted once, and per occurrence),
// temperature, top-k, top-p (the smallest set of the most likely tokens
// whose probability reaches p), min-p (tokens less likely than min-p times
// the most likely one dropped); then one draw from what is left. A
// temperature of 0 is greedy: the largest logit, lowest id on a tie. The
// draws come from a 64-bit Mersenne Twister seeded with `seed` and are
// turned into doubles by linnet, so a seed gives the same tokens on every
// machine.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_SAMPLER_H
#define LINNET_RUNTIME_SAMPLER_H

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace linnet {

struct SamplingOptions {
  double temperature = 0; ///< 0: greedy
  int64_t topK = 0;       ///< 0: every token
  double topP = 1;        ///< 1: no nucleus cut
  double minP = 0;        ///< 0: no cut
  double repetitionPenalty = 1;
  double presencePenalty = 0;
  double frequencyPenalty = 0;
  uint64_t seed = 0;

  bool greedy() const { return temperature == 0; }
  /// Each value in its range, or an error naming the value as the
  /// command line spells it (`--top-p`, [RunOptionsInvalid]) or as
  /// generation_config.json and the HTTP API do (`top_p`, `id`).
  llvm::Error validate(bool asFields = false,
                       ErrorId id = ErrorId::RunOptionsInvalid) const;
};

/// The sampling options someone chose (flags given, a request's fields),
/// each over a default that comes from elsewhere (generation_config.json).
struct SamplingOverrides {
  std::optional<double> temperature, topP, minP, repetitionPenalty,
      presencePenalty, frequencyPenalty;
  std::optional<int64_t> topK;
  std::optional<uint64_t> seed;

  bool any() const;
  /// `defaults` with each chosen value in place of its own.
  SamplingOptions over(SamplingOptions defaults) const;
};

/// One token the sampler may choose and its probability.
struct TokenProbability {
  int32_t id;
  double probability;
};

class Sampler {
public:
  explicit Sampler(const SamplingOptions &options)
      : options_(options), random(options.seed) {}
  const SamplingOptions &options() const { return options_; }

  /// The tokens left after every processor with their probabilities
  /// (summing to 1), most likely first, lower id first on a tie. `history`
  /// is the prompt and the tokens generated so far, which the penalties
  /// read. Greedy gives the one largest logit.
  std::vector<TokenProbability>
  distribution(const float *logits, int64_t vocab,
               llvm::ArrayRef<int32_t> history) const;

  /// The next token: one draw from distribution().
  int32_t sample(const float *logits, int64_t vocab,
                 llvm::ArrayRef<int32_t> history);

private:
  SamplingOptions options_;
  std::mt19937_64 random;
};

} // namespace linnet

#endif // LINNET_RUNTIME_SAMPLER_H

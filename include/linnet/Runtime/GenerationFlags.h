//===- GenerationFlags.h - The options of generation ------------*- C++ -*-===//
//-*-===//
//
// `linnet run` and every built binary take the same options for how
// --generate chooses tokens and where it stops; this declares them once,
// under the subcommand that takes them.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_GENERATIONFLAGS_H
#define LINNET_RUNTIME_GENERATIONFLAGS_H

#include "linnet/Runtime/Sampler.h"

#include "llvm/Support/CommandLine.h"

namespace linnet {

struct GenerationFlags {
  explicit GenerationFlags(llvm::cl::SubCommand &command)
      : temperature("temperature",
                    llvm::cl::desc("With --generate: sample at this "
                                   "temperature (default 0: greedy)"),
                    llvm::cl::init(0.0), llvm::cl::sub(command)),
        topK("top-k",
             llvm::cl::desc("Sample from the K most likely tokens (default 0: "
                            "all)"),
             llvm::cl::value_desc("K"), llvm::cl::init(0),
             llvm::cl::sub(command)),
        topP("top-p",
             llvm::cl::desc("Sample from the most likely tokens whose "
                            "probability reaches P (default 1)"),
             llvm::cl::value_desc("P"), llvm::cl::init(1.0),
             llvm::cl::sub(command)),
        minP("min-p",
             llvm::cl::desc("Drop tokens less likely than P times the most "
                            "likely (default 0)"),
             llvm::cl::value_desc("P"), llvm::cl::init(0.0),
             llvm::cl::sub(command)),
        repetitionPenalty(
            "repetition-penalty",
            llvm::cl::desc("Divide the positive logits of tokens seen (prompt "
                           "and generated) by this, multiply negative ones "
                           "(default 1: none)"),
            llvm::cl::init(1.0), llvm::cl::sub(command)),
        presencePenalty("presence-penalty",
                        llvm::cl::desc("Subtract this from the logits of "
                                       "tokens seen (-2 to 2, default 0)"),
                        llvm::cl::init(0.0), llvm::cl::sub(command)),
        frequencyPenalty("frequency-penalty",
                         llvm::cl::desc("Subtract this times each token's "
                                        "count so far (-2 to 2, default 0)"),
                         llvm::cl::init(0.0), llvm::cl::sub(command)),
        seed("seed",
             llvm::cl::desc("The seed of the sampler's draws (default 0): the "
                            "same seed gives the same tokens"),
             llvm::cl::init(0), llvm::cl::sub(command)),
        stop("stop",
             llvm::cl::desc("With --prompt: end the text at this string, "
                            "which is not printed (repeatable)"),
             llvm::cl::value_desc("text"), llvm::cl::sub(command)) {}

  SamplingOptions options() const {
    SamplingOptions result;
    result.temperature = temperature;
    result.topK = topK;
    result.topP = topP;
    result.minP = minP;
    result.repetitionPenalty = repetitionPenalty;
    result.presencePenalty = presencePenalty;
    result.frequencyPenalty = frequencyPenalty;
    result.seed = seed;
    return result;
  }
  /// Whether any sampling option was given (they need --generate).
  bool samplingGiven() const {
    return temperature.getNumOccurrences() || topK.getNumOccurrences() ||
           topP.getNumOccurrences() || minP.getNumOccurrences() ||
           repetitionPenalty.getNumOccurrences() ||
           presencePenalty.getNumOccurrences() ||
           frequencyPenalty.getNumOccurrences() || seed.getNumOccurrences();
  }

  llvm::cl::opt<double> temperature;
  llvm::cl::opt<int64_t> topK;
  llvm::cl::opt<double> topP, minP, repetitionPenalty, presencePenalty,
      frequencyPenalty;
  llvm::cl::opt<uint64_t> seed;
  llvm::cl::list<std::string> stop;
};

} // namespace linnet

#endif // LINNET_RUNTIME_GENERATIONFLAGS_H

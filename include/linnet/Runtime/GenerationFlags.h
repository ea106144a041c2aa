//===- GenerationFlags.h - The options of generation ------------*- C++ -*-===//
//
// `linnet run` and every built binary take the same options for what
// --generate starts from (ids, a text, a chat), how it chooses tokens and
// where it stops; this declares them once, under the subcommand that takes
// them, and puts what was given into RunOptions.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_GENERATIONFLAGS_H
#define LINNET_RUNTIME_GENERATIONFLAGS_H

#include "linnet/Runtime/ModelRun.h"
#include "linnet/Runtime/Sampler.h"

#include "llvm/Support/CommandLine.h"

#include <optional>

namespace linnet {

struct GenerationFlags {
  explicit GenerationFlags(llvm::cl::SubCommand &command)
      : generate("generate",
                 llvm::cl::desc("Generate up to N tokens (each reply's with "
                                "--chat)"),
                 llvm::cl::value_desc("N"), llvm::cl::sub(command)),
        promptTokens("prompt-tokens",
                     llvm::cl::desc("Generate from these token ids "
                                    "(\"1,2,3\"), printing ids"),
                     llvm::cl::value_desc("ids"), llvm::cl::sub(command)),
        prompt("prompt",
               llvm::cl::desc("Generate from this text, encoded with the "
                              "checkpoint's tokenizer.json, and print the "
                              "text"),
               llvm::cl::value_desc("text"), llvm::cl::sub(command)),
        promptFile("prompt-file",
                   llvm::cl::desc("--prompt with the text in FILE (`-`: "
                                  "standard input)"),
                   llvm::cl::value_desc("file"), llvm::cl::sub(command)),
        chat("chat",
             llvm::cl::desc("Reply to a chat through the checkpoint's chat "
                            "template: a JSON list of messages (or an object "
                            "with `messages`, `tools`, ...) in FILE, or `-`: "
                            "a conversation, one user message per line of "
                            "standard input"),
             llvm::cl::value_desc("file|-"), llvm::cl::sub(command)),
        system("system",
               llvm::cl::desc("With --chat -: the system message the "
                              "conversation starts with"),
               llvm::cl::value_desc("text"), llvm::cl::sub(command)),
        thinking("thinking",
                 llvm::cl::desc("With --chat: `on` or `off`, the template's "
                                "`enable_thinking`"),
                 llvm::cl::value_desc("on|off"), llvm::cl::sub(command)),
        chatTemplate("chat-template",
                     llvm::cl::desc("With --chat: the Jinja template in FILE "
                                    "instead of the checkpoint's"),
                     llvm::cl::value_desc("file"), llvm::cl::sub(command)),
        tokenizer("tokenizer",
                  llvm::cl::desc("With --prompt or --chat: the folder with "
                                 "the tokenizer.json (and "
                                 "generation_config.json, chat template) "
                                 "instead of the checkpoint"),
                  llvm::cl::value_desc("dir"), llvm::cl::sub(command)),
        transcript("transcript",
                   llvm::cl::desc("With --prompt or --chat: write each "
                                  "reply's ids, a JSON object per line: the "
                                  "ids fed, their position, the ids "
                                  "generated"),
                   llvm::cl::value_desc("file"), llvm::cl::sub(command)),
        temperature("temperature",
                    llvm::cl::desc("Sample at this temperature (0: greedy; "
                                   "default: generation_config.json's, "
                                   "else 0)"),
                    llvm::cl::sub(command)),
        topK("top-k",
             llvm::cl::desc("Sample from the K most likely tokens (0: all)"),
             llvm::cl::value_desc("K"), llvm::cl::sub(command)),
        topP("top-p",
             llvm::cl::desc("Sample from the most likely tokens whose "
                            "probability reaches P (1: all)"),
             llvm::cl::value_desc("P"), llvm::cl::sub(command)),
        minP("min-p",
             llvm::cl::desc("Drop tokens less likely than P times the most "
                            "likely (0: none)"),
             llvm::cl::value_desc("P"), llvm::cl::sub(command)),
        repetitionPenalty(
            "repetition-penalty",
            llvm::cl::desc("Divide the positive logits of tokens seen (prompt "
                           "and generated) by this, multiply negative ones "
                           "(1: none)"),
            llvm::cl::sub(command)),
        presencePenalty("presence-penalty",
                        llvm::cl::desc("Subtract this from the logits of "
                                       "tokens seen (-2 to 2, default 0)"),
                        llvm::cl::sub(command)),
        frequencyPenalty("frequency-penalty",
                         llvm::cl::desc("Subtract this times each token's "
                                        "count so far (-2 to 2, default 0)"),
                         llvm::cl::sub(command)),
        seed("seed",
             llvm::cl::desc("The seed of the sampler's draws (default 0): the "
                            "same seed gives the same tokens"),
             llvm::cl::sub(command)),
        stop("stop",
             llvm::cl::desc("With --prompt or --chat: end the text at this "
                            "string, which is not printed (repeatable)"),
             llvm::cl::value_desc("text"), llvm::cl::sub(command)) {}

  /// Puts the options given into `options`; an error for --prompt with
  /// --prompt-file, a file that cannot be read, a bad --thinking.
  llvm::Error apply(RunOptions &options) const {
    if (generate.getNumOccurrences())
      options.generate = generate;
    if (promptTokens.getNumOccurrences())
      options.prompt = promptTokens;
    if (llvm::Error error = setPromptText(options, prompt, promptFile))
      return error;
    if (chat.getNumOccurrences())
      options.chat = chat;
    if (system.getNumOccurrences())
      options.systemMessage = system;
    if (thinking.getNumOccurrences()) {
      if (thinking != "on" && thinking != "off")
        return makeError(ErrorId::RunOptionsInvalid,
                         "--thinking: expected `on` or `off`, found `" +
                             thinking + "`");
      options.thinking = thinking == "on";
    }
    options.chatTemplate = chatTemplate;
    options.tokenizer = tokenizer;
    options.transcript = transcript;
    SamplingOverrides &sampling = options.sampling;
    auto take = [](auto &flag, auto &value) {
      if (flag.getNumOccurrences())
        value = flag.getValue();
    };
    take(temperature, sampling.temperature);
    take(topK, sampling.topK);
    take(topP, sampling.topP);
    take(minP, sampling.minP);
    take(repetitionPenalty, sampling.repetitionPenalty);
    take(presencePenalty, sampling.presencePenalty);
    take(frequencyPenalty, sampling.frequencyPenalty);
    take(seed, sampling.seed);
    options.stopStrings.assign(stop.begin(), stop.end());
    return llvm::Error::success();
  }

  llvm::cl::opt<unsigned> generate;
  llvm::cl::opt<std::string> promptTokens, prompt, promptFile, chat, system,
      thinking, chatTemplate, tokenizer, transcript;
  llvm::cl::opt<double> temperature;
  llvm::cl::opt<int64_t> topK;
  llvm::cl::opt<double> topP, minP, repetitionPenalty, presencePenalty,
      frequencyPenalty;
  llvm::cl::opt<uint64_t> seed;
  llvm::cl::list<std::string> stop;
};

} // namespace linnet

#endif // LINNET_RUNTIME_GENERATIONFLAGS_H

//===- CompletionRequest.h - An OpenAI completion request -------*- C++ -*-===//
//
// `POST /v1/chat/completions` and `/v1/completions` take the JSON bodies
// OpenAI's API defines (and vLLM and llama-server extend: `top_k`,
// `min_p`, `repetition_penalty`, `chat_template_kwargs`). This reads one
// into what the server needs, checking each known field's type and range
// and naming the field in the error; fields it does not know are ignored,
// as OpenAI's clients send some that a server may not use.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_COMPLETIONREQUEST_H
#define LINNET_SERVE_COMPLETIONREQUEST_H

#include "linnet/Runtime/Sampler.h"
#include "linnet/Template/ChatTemplate.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace linnet::serve {

struct CompletionRequest {
  bool chat = false;
  std::string model;
  /// chat: the messages, tools and template variables
  /// (`chat_template_kwargs`).
  tmpl::ChatInput chatInput;
  bool hasTools = false;
  /// completions: the prompt as text, or as token ids.
  std::string promptText;
  std::optional<std::vector<int32_t>> promptIds;

  std::optional<unsigned> maxTokens;
  SamplingOverrides sampling;
  std::vector<std::string> stop;
  bool stream = false, includeUsage = false;
  bool logprobs = false;
  unsigned topLogprobs = 0;
  unsigned n = 1;
  /// `return_token_ids` (vLLM's): the ids of the prompt and of each choice
  /// in the response too.
  bool returnTokenIds = false;
};

/// The most stop strings, choices and top log-probabilities a request may
/// ask for.
inline constexpr unsigned kMaxStopStrings = 16;
inline constexpr unsigned kMaxChoices = 64;
inline constexpr unsigned kMaxTopLogprobs = 20;

/// Reads `body`; errors are ApiErrors (400) naming the field.
llvm::Expected<CompletionRequest> parseCompletionRequest(llvm::StringRef body,
                                                         bool chat);

} // namespace linnet::serve

#endif // LINNET_SERVE_COMPLETIONREQUEST_H

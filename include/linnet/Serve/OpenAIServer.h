//===- OpenAIServer.h - The OpenAI-compatible endpoints ---------*- C++ -*-===//
//
// What `linnet serve` and a built binary's --serve answer: chat and text
// completions (whole or streamed as server-sent events), the model list,
// health and Prometheus metrics. A request's text goes through the
// checkpoint's chat template and tokenizer here, on the connection's
// thread; the scheduler sees ids only, and its events come back as text,
// reasoning and tool calls.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_OPENAISERVER_H
#define LINNET_SERVE_OPENAISERVER_H

#include "linnet/Runtime/GenerationConfig.h"
#include "linnet/Serve/CompletionRequest.h"
#include "linnet/Serve/HttpServer.h"
#include "linnet/Serve/Scheduler.h"
#include "linnet/Serve/ServerMetrics.h"
#include "linnet/Template/ChatTemplate.h"
#include "linnet/Text/Tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>

namespace linnet::serve {

struct OpenAIOptions {
  /// The name /v1/models lists and requests may give as `model`.
  std::string modelName;
  /// When not empty, every request but /health must carry it as
  /// `Authorization: Bearer KEY`.
  std::string apiKey;
  /// The template's `enable_thinking` when a request does not set it.
  std::optional<bool> thinking;
};

class OpenAIServer {
public:
  OpenAIServer(Scheduler &scheduler, const Tokenizer &tokenizer,
               const GenerationConfig &generation,
               const tmpl::ChatTemplate *chatTemplate,
               std::string templateProblem, ServerMetrics &metrics,
               OpenAIOptions options);

  void handle(const HttpRequest &request, HttpResponder &responder);

private:
  struct Prompt;
  void complete(const HttpRequest &http, HttpResponder &responder, bool chat);
  llvm::Expected<Prompt> promptOf(CompletionRequest &request) const;

  Scheduler &scheduler;
  const Tokenizer &tokenizer;
  const GenerationConfig &generation;
  const tmpl::ChatTemplate *chatTemplate;
  std::string templateProblem;
  ServerMetrics &metrics;
  OpenAIOptions options;
  int64_t created;
};

/// The body of an error answer with `status`, for errors found before a
/// request reaches an endpoint (bytes that are not HTTP).
std::string errorBody(int status, llvm::StringRef message);

} // namespace linnet::serve

#endif // LINNET_SERVE_OPENAISERVER_H

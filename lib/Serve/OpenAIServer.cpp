//===- OpenAIServer.cpp - The OpenAI-compatible endpoints -----------------===//
//
// Responses follow OpenAI's shapes as vLLM returns them (`reasoning_content`
// beside `content`, `prompt_tokens_details.cached_tokens`); a streamed
// response sends each choice's role first, then its pieces, then a chunk
// with its finish reason, the usage when asked, and `data: [DONE]`.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/OpenAIServer.h"

#include "linnet/Basic/UTF8.h"
#include "linnet/Serve/ApiError.h"
#include "linnet/Serve/ReplyParser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <random>

using namespace linnet;
using namespace linnet::serve;
namespace json = llvm::json;

namespace {

std::string text(const json::Value &value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << value;
  return out;
}

/// A fresh id for a response (`chatcmpl-…`) or a tool call (`call_…`).
std::string freshId(llvm::StringRef prefix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t start = std::random_device()();
  return prefix.str() +
         llvm::utohexstr(start ^ (counter++ * 0x9E3779B97F4A7C15ull), true);
}

void answerError(HttpResponder &responder, llvm::Error error) {
  int status = 400;
  std::string body;
  llvm::handleAllErrors(
      std::move(error),
      [&](const ApiError &api) {
        status = api.status;
        body = api.json();
      },
      [&](const llvm::ErrorInfoBase &other) {
        body =
            ApiError(400, "invalid_request_error", "", other.message()).json();
      });
  responder.respond(status, "application/json", body);
}

/// A token as OpenAI shows it: its text, and its bytes when they are not
/// text on their own (part of a character).
json::Object tokenEntry(const Tokenizer &tokenizer, int32_t id,
                        double logprob) {
  llvm::StringRef bytes = id < tokenizer.vocabularySize()
                              ? tokenizer.tokenBytes(id)
                              : llvm::StringRef();
  json::Array byteList;
  for (unsigned char byte : bytes)
    byteList.push_back(int64_t(byte));
  return json::Object{{"token", replaceInvalidUTF8(bytes)},
                      {"logprob", logprob},
                      {"bytes", std::move(byteList)}};
}

/// One choice as it is answered.
struct Choice {
  explicit Choice(bool thinking, bool tools) : parser(thinking, tools) {}
  ReplyParser parser;
  std::string content, reasoning, text;
  std::vector<ToolCall> toolCalls;
  json::Array logprobs, ids;
  /// completions' logprobs: four parallel lists.
  json::Array tokens, tokenLogprobs, topLogprobs, offsets;
  size_t textLength = 0;
  unsigned generated = 0;
  std::string finishReason;
  bool sentRole = false;
};

} // namespace

std::string serve::errorBody(int status, llvm::StringRef message) {
  ErrorId id = status == 404 || status == 405 ? ErrorId::EndpointUnknown
               : status == 401                ? ErrorId::ApiKeyInvalid
               : status == 503                ? ErrorId::ServerBusy
                                              : ErrorId::HttpRequestMalformed;
  return ApiError(status,
                  status == 503 ? "server_error" : "invalid_request_error", "",
                  llvm::toString(makeError(id, message)))
      .json();
}

struct OpenAIServer::Prompt {
  std::vector<int32_t> ids;
  std::optional<size_t> boundary;
  /// The prompt ends inside a `<think>` block the reply continues.
  bool thinking = false;
};

OpenAIServer::OpenAIServer(Scheduler &scheduler, const Tokenizer &tokenizer,
                           const GenerationConfig &generation,
                           const tmpl::ChatTemplate *chatTemplate,
                           std::string templateProblem, ServerMetrics &metrics,
                           OpenAIOptions options)
    : scheduler(scheduler), tokenizer(tokenizer), generation(generation),
      chatTemplate(chatTemplate), templateProblem(std::move(templateProblem)),
      metrics(metrics), options(std::move(options)),
      created(std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count()) {}

void OpenAIServer::handle(const HttpRequest &request,
                          HttpResponder &responder) {
  llvm::StringRef path = request.path;
  struct Route {
    llvm::StringRef path, method;
  };
  static const Route routes[] = {{"/health", "GET"},
                                 {"/metrics", "GET"},
                                 {"/v1/models", "GET"},
                                 {"/v1/chat/completions", "POST"},
                                 {"/v1/completions", "POST"}};
  const Route *route = nullptr;
  for (const Route &candidate : routes)
    if (candidate.path == path)
      route = &candidate;
  auto answer = [&] {
    if (!route)
      return responder.respond(
          404, "application/json",
          errorBody(404, "`" + path.str() +
                             "` is not an endpoint of this server (" +
                             "/v1/chat/completions, /v1/completions, "
                             "/v1/models, /health, /metrics)"));
    if (request.method != route->method)
      return responder.respond(405, "application/json",
                               errorBody(405, "`" + path.str() + "` takes " +
                                                  route->method.str() +
                                                  ", not " + request.method),
                               {{"Allow", route->method.str()}});
    if (!options.apiKey.empty() && path != "/health" &&
        request.header("authorization") != "Bearer " + options.apiKey)
      return responder.respond(
          401, "application/json",
          errorBody(401, "give the server's API key as `Authorization: "
                         "Bearer KEY`"),
          {{"WWW-Authenticate", "Bearer"}});
    if (path == "/health")
      return responder.respond(200, "application/json", "{\"status\":\"ok\"}");
    if (path == "/metrics")
      return responder.respond(200, "text/plain; version=0.0.4",
                               metrics.render());
    if (path == "/v1/models")
      return responder.respond(
          200, "application/json",
          text(json::Object{
              {"object", "list"},
              {"data", json::Array{json::Object{
                           {"id", options.modelName},
                           {"object", "model"},
                           {"created", created},
                           {"owned_by", "linnet"},
                           {"max_model_len", scheduler.maxSeq()}}}}}));
    complete(request, responder, path == "/v1/chat/completions");
  };
  answer();
  metrics.countRequest(route ? path : "other", responder.statusSent());
}

llvm::Expected<OpenAIServer::Prompt>
OpenAIServer::promptOf(CompletionRequest &request) const {
  Prompt prompt;
  if (!request.chat) {
    if (request.promptIds) {
      prompt.ids = std::move(*request.promptIds);
      return prompt;
    }
    auto ids = tokenizer.encode(request.promptText);
    if (!ids)
      return ApiError::make(400, "invalid_request_error", "prompt",
                            ErrorId::RequestInvalid,
                            "`prompt`: " + llvm::toString(ids.takeError()));
    prompt.ids = std::move(*ids);
    return prompt;
  }
  if (!chatTemplate)
    return ApiError::make(
        400, "invalid_request_error", "messages", ErrorId::TemplateMissing,
        "this server has no chat template: " +
            llvm::StringRef(templateProblem).rsplit(" [").first +
            "; use /v1/completions with a prompt");
  tmpl::ChatInput &input = request.chatInput;
  if (options.thinking && !input.extra.find("enable_thinking"))
    input.extra.set("enable_thinking", tmpl::Value::boolean(*options.thinking));
  auto rendered = chatTemplate->render(input);
  if (!rendered)
    return ApiError::make(400, "invalid_request_error", "messages",
                          ErrorId::RequestInvalid,
                          "the chat template refuses the messages: " +
                              llvm::toString(rendered.takeError()));
  auto ids = tokenizer.encode(*rendered);
  if (!ids)
    return ApiError::make(400, "invalid_request_error", "messages",
                          ErrorId::RequestInvalid,
                          "`messages`: " + llvm::toString(ids.takeError()));
  prompt.ids = std::move(*ids);
  prompt.thinking = llvm::StringRef(*rendered).rtrim().ends_with("<think>");
  // Where the last message's text starts (after its role's header): what
  // comes before is the earlier turns, which a later request of the same
  // conversation, or another user after the same system prompt, repeats,
  // so a snapshot of the state there is worth keeping. It is found as the
  // ids this prompt shares with one whose last message says something else
  // (a template may refuse the earlier turns alone: Qwen's wants a user).
  const tmpl::Value &last = input.messages.items->back();
  const tmpl::Value *content = last.map->find("content");
  if (content && content->is(tmpl::Value::Kind::String)) {
    tmpl::ChatInput other = input;
    std::vector<tmpl::Value> items(input.messages.items->begin(),
                                   input.messages.items->end());
    tmpl::Dict changed = *last.map;
    changed.set(
        "content",
        tmpl::Value::string(
            llvm::StringRef(content->str()).starts_with("x") ? "y" : "x"));
    items.back() = tmpl::Value::dict(std::move(changed));
    other.messages = tmpl::Value::list(std::move(items));
    if (auto otherText = chatTemplate->render(other)) {
      if (auto otherIds = tokenizer.encode(*otherText)) {
        size_t shared = std::mismatch(prompt.ids.begin(), prompt.ids.end(),
                                      otherIds->begin(), otherIds->end())
                            .first -
                        prompt.ids.begin();
        if (shared > 0 && shared < prompt.ids.size())
          prompt.boundary = shared;
      } else {
        llvm::consumeError(otherIds.takeError());
      }
    } else {
      llvm::consumeError(otherText.takeError());
    }
  }
  return prompt;
}

void OpenAIServer::complete(const HttpRequest &http, HttpResponder &responder,
                            bool chat) {
  auto parsed = parseCompletionRequest(http.body, chat);
  if (!parsed)
    return answerError(responder, parsed.takeError());
  CompletionRequest &request = *parsed;
  if (!request.model.empty() && request.model != options.modelName)
    return answerError(responder,
                       ApiError::make(404, "invalid_request_error", "model",
                                      ErrorId::RequestInvalid,
                                      "`model`: this server serves `" +
                                          options.modelName + "`, not `" +
                                          request.model + "`"));
  auto prompt = promptOf(request);
  if (!prompt)
    return answerError(responder, prompt.takeError());

  GenerationRequest generationRequest;
  generationRequest.prompt = prompt->ids;
  generationRequest.maxTokens =
      request.maxTokens.value_or(unsigned(scheduler.maxSeq()));
  generationRequest.sampling = request.sampling.over(generation.sampling);
  generationRequest.choices = request.n;
  generationRequest.stopStrings = request.stop;
  generationRequest.stopIds = generation.stopIds;
  generationRequest.logprobs = request.logprobs;
  generationRequest.topLogprobs = request.topLogprobs;
  generationRequest.cacheBoundary = prompt->boundary;
  auto channel = scheduler.submit(std::move(generationRequest));
  if (!channel)
    return answerError(responder, channel.takeError());

  std::string id = freshId(chat ? "chatcmpl-" : "cmpl-");
  std::vector<Choice> choices(request.n,
                              Choice(prompt->thinking, request.hasTools));
  llvm::StringRef object = chat ? "chat.completion" : "text_completion";
  std::string chunkObject = chat ? "chat.completion.chunk" : "text_completion";
  auto envelope = [&](llvm::StringRef kind, json::Array choiceList) {
    return json::Object{
        {"id", id},
        {"object", kind},
        {"created", std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count()},
        {"model", options.modelName},
        {"choices", std::move(choiceList)}};
  };
  auto usage = [&] {
    int64_t generated = 0;
    for (const Choice &choice : choices)
      generated += choice.generated;
    int64_t promptTokens = int64_t(prompt->ids.size());
    return json::Object{
        {"prompt_tokens", promptTokens},
        {"completion_tokens", generated},
        {"total_tokens", promptTokens + generated},
        {"prompt_tokens_details",
         json::Object{{"cached_tokens", int64_t((*channel)->cachedTokens)}}}};
  };
  auto toolCallList = [&](const std::vector<ToolCall> &calls, size_t first) {
    json::Array list;
    for (auto [index, call] : llvm::enumerate(calls))
      list.push_back(json::Object{
          {"index", int64_t(first + index)},
          {"id", freshId("call_")},
          {"type", "function"},
          {"function",
           json::Object{{"name", call.name}, {"arguments", call.arguments}}}});
    return list;
  };
  // A streamed chunk of choice `index`: its delta (chat) or text.
  auto sendChunk = [&](unsigned index, const ReplyDelta &delta,
                       llvm::StringRef piece, json::Value logprobs,
                       std::optional<std::string> finish,
                       std::optional<int32_t> token) {
    Choice &choice = choices[index];
    json::Object entry{{"index", int64_t(index)},
                       {"logprobs", std::move(logprobs)},
                       {"finish_reason",
                        finish ? json::Value(*finish) : json::Value(nullptr)}};
    if (request.returnTokenIds)
      entry["token_ids"] = token ? json::Array{int64_t(*token)} : json::Array{};
    if (chat) {
      json::Object deltaObject;
      if (!choice.sentRole) {
        deltaObject["role"] = "assistant";
        choice.sentRole = true;
        if (delta.empty())
          deltaObject["content"] = "";
      }
      if (!delta.reasoning.empty())
        deltaObject["reasoning_content"] = delta.reasoning;
      if (!delta.content.empty())
        deltaObject["content"] = delta.content;
      if (!delta.toolCalls.empty())
        deltaObject["tool_calls"] =
            toolCallList(delta.toolCalls, choice.toolCalls.size());
      entry["delta"] = std::move(deltaObject);
    } else {
      entry["text"] = piece;
    }
    return responder.sendEvent(
        text(envelope(chunkObject, json::Array{std::move(entry)})));
  };

  if (request.stream && !responder.startEvents())
    return (*channel)->cancel();
  size_t finished = 0;
  while (finished < choices.size()) {
    std::optional<GenerationEvent> event =
        (*channel)->next(std::chrono::milliseconds(100));
    // A client that hung up frees its slot at the next step, asked at
    // every event: a reply not streamed, or tokens whose text is held
    // back, send nothing that would fail.
    if (responder.clientGone())
      return (*channel)->cancel();
    if (!event)
      continue;
    if (event->kind == GenerationEvent::Failure) {
      (*channel)->cancel();
      ApiError failure(500, "server_error", "",
                       "the model failed on this request: " + event->error);
      if (!request.stream)
        return responder.respond(500, "application/json", failure.json());
      responder.sendEvent(failure.json());
      responder.sendEvent("[DONE]");
      return responder.endEvents();
    }
    Choice &choice = choices[event->choice];
    ReplyDelta delta;
    json::Value logprobs = nullptr;
    if (event->kind == GenerationEvent::Token) {
      ++choice.generated;
      choice.ids.push_back(int64_t(event->id));
      if (event->logprob) {
        json::Object entry =
            tokenEntry(tokenizer, event->id, event->logprob->logprob);
        json::Array top;
        json::Object topMap;
        for (const TokenLogprob &other : event->top) {
          top.push_back(tokenEntry(tokenizer, other.id, other.logprob));
          topMap[replaceInvalidUTF8(other.id < tokenizer.vocabularySize()
                                        ? tokenizer.tokenBytes(other.id)
                                        : "")] = other.logprob;
        }
        if (chat) {
          entry["top_logprobs"] = std::move(top);
          choice.logprobs.push_back(json::Object(entry));
          logprobs = json::Object{{"content", json::Array{std::move(entry)}}};
        } else {
          json::Value token = *entry.get("token");
          choice.tokens.push_back(token);
          choice.tokenLogprobs.push_back(event->logprob->logprob);
          choice.topLogprobs.push_back(json::Object(topMap));
          choice.offsets.push_back(int64_t(choice.textLength));
          logprobs = json::Object{
              {"tokens", json::Array{std::move(token)}},
              {"token_logprobs", json::Array{event->logprob->logprob}},
              {"top_logprobs", json::Array{std::move(topMap)}},
              {"text_offset", json::Array{int64_t(choice.textLength)}}};
        }
      }
    } else {
      // An end-of-sequence id counts as generated, as in vLLM.
      choice.generated = event->generated;
      ++finished;
      choice.finishReason = event->finishReason;
    }
    choice.textLength += event->text.size();
    if (chat) {
      delta = choice.parser.push(event->text);
      if (event->kind == GenerationEvent::Finish) {
        ReplyDelta rest = choice.parser.finish();
        delta.reasoning += rest.reasoning;
        delta.content += rest.content;
        llvm::append_range(delta.toolCalls, rest.toolCalls);
      }
      choice.reasoning += delta.reasoning;
      choice.content += delta.content;
    } else {
      choice.text += event->text;
    }
    std::optional<std::string> finishReason;
    if (event->kind == GenerationEvent::Finish) {
      bool calls = !choice.toolCalls.empty() || !delta.toolCalls.empty();
      finishReason = calls && choice.finishReason == "stop"
                         ? "tool_calls"
                         : choice.finishReason;
      choice.finishReason = *finishReason;
    }
    // A token whose text is held back (part of a character, the start of
    // a stop string) is sent once it has something to say, unless its id
    // or log-probability was asked for.
    if (request.stream &&
        (!delta.empty() || !event->text.empty() || request.returnTokenIds ||
         logprobs.kind() != json::Value::Null || finishReason ||
         (chat && !choice.sentRole))) {
      if (!sendChunk(event->choice, delta, event->text, std::move(logprobs),
                     finishReason,
                     event->kind == GenerationEvent::Token
                         ? std::optional<int32_t>(event->id)
                         : std::nullopt))
        return (*channel)->cancel();
    }
    llvm::append_range(choice.toolCalls, delta.toolCalls);
  }
  if (request.stream) {
    if (request.includeUsage) {
      json::Object last = envelope(chunkObject, json::Array{});
      last["usage"] = usage();
      responder.sendEvent(text(json::Value(std::move(last))));
    }
    responder.sendEvent("[DONE]");
    return responder.endEvents();
  }
  json::Array list;
  for (auto [index, choice] : llvm::enumerate(choices)) {
    json::Object entry{{"index", int64_t(index)},
                       {"finish_reason", choice.finishReason}};
    if (request.returnTokenIds)
      entry["token_ids"] = std::move(choice.ids);
    if (chat) {
      json::Object message{
          {"role", "assistant"},
          {"content", choice.content.empty() && !choice.toolCalls.empty()
                          ? json::Value(nullptr)
                          : json::Value(choice.content)}};
      if (!choice.reasoning.empty() || prompt->thinking)
        message["reasoning_content"] = choice.reasoning;
      if (!choice.toolCalls.empty())
        message["tool_calls"] = toolCallList(choice.toolCalls, 0);
      entry["message"] = std::move(message);
      entry["logprobs"] = request.logprobs
                              ? json::Value(json::Object{
                                    {"content", std::move(choice.logprobs)}})
                              : json::Value(nullptr);
    } else {
      entry["text"] = choice.text;
      entry["logprobs"] =
          request.logprobs
              ? json::Value(json::Object{
                    {"tokens", std::move(choice.tokens)},
                    {"token_logprobs", std::move(choice.tokenLogprobs)},
                    {"top_logprobs", std::move(choice.topLogprobs)},
                    {"text_offset", std::move(choice.offsets)}})
              : json::Value(nullptr);
    }
    list.push_back(std::move(entry));
  }
  json::Object body = envelope(object, std::move(list));
  body["usage"] = usage();
  if (request.returnTokenIds)
    body["prompt_token_ids"] = json::Array(prompt->ids);
  responder.respond(200, "application/json",
                    text(json::Value(std::move(body))));
}

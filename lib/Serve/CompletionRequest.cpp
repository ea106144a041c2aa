//===- CompletionRequest.cpp - The body of an OpenAI completion request ---===//
//
// A field that is `null` counts as absent (OpenAI's Python client sends
// some that way). Messages and tools are read a second time as ordered
// template values, because a template's `tojson` prints keys in the order
// the client wrote them.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/CompletionRequest.h"

#include "linnet/Basic/JSON.h"
#include "linnet/Serve/ApiError.h"
#include "linnet/Template/Value.h"

using namespace linnet;
using namespace linnet::serve;

namespace {

llvm::Error invalid(llvm::StringRef field, const llvm::Twine &message) {
  return ApiError::make(
      400, "invalid_request_error", field, ErrorId::RequestInvalid,
      field.empty() ? message : "`" + field + "`: " + message);
}

/// Reads the fields of one body, each checked as it is taken.
class FieldReader {
public:
  explicit FieldReader(const llvm::json::Object &object) : object(object) {}

  const llvm::json::Value *get(llvm::StringRef key) const {
    const llvm::json::Value *value = object.get(key);
    return value && value->kind() != llvm::json::Value::Null ? value : nullptr;
  }

  llvm::Error integer(llvm::StringRef key, int64_t low, int64_t high,
                      std::optional<int64_t> &out) const {
    const llvm::json::Value *value = get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<int64_t> number = jsonInteger(*value);
    if (!number)
      return invalid(key, "expected an integer");
    if (*number < low || *number > high)
      return invalid(key, llvm::Twine(*number) + " is outside [" +
                              llvm::Twine(low) + ", " + llvm::Twine(high) +
                              "]");
    out = number;
    return llvm::Error::success();
  }

  llvm::Error number(llvm::StringRef key, std::optional<double> &out) const {
    const llvm::json::Value *value = get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<double> number = value->getAsNumber();
    if (!number)
      return invalid(key, "expected a number");
    out = number;
    return llvm::Error::success();
  }

  llvm::Error boolean(llvm::StringRef key, bool &out) const {
    const llvm::json::Value *value = get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag)
      return invalid(key, "expected true or false");
    out = *flag;
    return llvm::Error::success();
  }

  llvm::Error string(llvm::StringRef key, std::string &out) const {
    const llvm::json::Value *value = get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return invalid(key, "expected a string");
    out = text->str();
    return llvm::Error::success();
  }

private:
  const llvm::json::Object &object;
};

llvm::Error readStops(const FieldReader &fields, CompletionRequest &request) {
  const llvm::json::Value *stop = fields.get("stop");
  if (!stop)
    return llvm::Error::success();
  if (std::optional<llvm::StringRef> one = stop->getAsString()) {
    request.stop.push_back(one->str());
  } else if (const llvm::json::Array *many = stop->getAsArray()) {
    if (many->size() > kMaxStopStrings)
      return invalid("stop", llvm::Twine(many->size()) +
                                 " strings; give at most " +
                                 llvm::Twine(kMaxStopStrings));
    for (const llvm::json::Value &item : *many) {
      std::optional<llvm::StringRef> text = item.getAsString();
      if (!text)
        return invalid("stop", "expected a string or a list of strings");
      request.stop.push_back(text->str());
    }
  } else {
    return invalid("stop", "expected a string or a list of strings");
  }
  for (const std::string &text : request.stop)
    if (text.empty())
      return invalid("stop", "a stop string is empty");
  return llvm::Error::success();
}

/// `prompt`: a string, a list of ids, or a list holding one of those.
llvm::Error readPrompt(const FieldReader &fields, CompletionRequest &request) {
  const llvm::json::Value *prompt = fields.get("prompt");
  if (!prompt)
    return invalid("prompt", "missing; give the text to complete");
  if (std::optional<llvm::StringRef> text = prompt->getAsString()) {
    request.promptText = text->str();
    return llvm::Error::success();
  }
  const llvm::json::Array *list = prompt->getAsArray();
  if (!list)
    return invalid("prompt", "expected a string or a list of token ids");
  if (list->size() == 1 &&
      ((*list)[0].getAsString() || (*list)[0].getAsArray()))
    return readPrompt(FieldReader(llvm::json::Object{{"prompt", (*list)[0]}}),
                      request);
  std::vector<int32_t> ids;
  for (const llvm::json::Value &item : *list) {
    std::optional<int64_t> id = jsonInteger(item);
    if (!id)
      return invalid("prompt",
                     item.getAsString() || item.getAsArray()
                         ? "a list of several prompts; this server takes one "
                           "prompt per request (use `n` for several choices)"
                         : "expected a string or a list of token ids");
    if (*id < 0 || *id > INT32_MAX)
      return invalid("prompt",
                     "token id " + llvm::Twine(*id) + " is not a token id");
    ids.push_back(int32_t(*id));
  }
  request.promptIds = std::move(ids);
  return llvm::Error::success();
}

llvm::Error readMessages(llvm::StringRef body, const FieldReader &fields,
                         CompletionRequest &request) {
  if (!fields.get("messages"))
    return invalid("messages", "missing; give the chat to answer");
  const llvm::json::Value *kwargs = fields.get("chat_template_kwargs");
  if (kwargs && !kwargs->getAsObject())
    return invalid("chat_template_kwargs", "expected an object");
  const llvm::json::Value *tools = fields.get("tools");
  if (tools && !tools->getAsArray())
    return invalid("tools", "expected a list of tools");
  request.hasTools = tools && !tools->getAsArray()->empty();
  // The ordered reading of the same body.
  auto document =
      tmpl::parseJSONValue(body, "the request", ErrorId::RequestInvalid);
  if (!document)
    return invalid("", llvm::toString(document.takeError()));
  tmpl::Dict chat;
  for (const auto &[key, value] : document->map->entries) {
    if (key == "messages" || (key == "tools" && request.hasTools))
      chat.set(key, value);
    else if (key == "chat_template_kwargs")
      for (const auto &[name, variable] : value.map->entries)
        chat.set(name, variable);
  }
  auto input =
      tmpl::chatInputOf(tmpl::Value::dict(std::move(chat)), "messages");
  if (!input)
    return invalid("messages", llvm::toString(input.takeError()));
  if (input->messages.items->empty())
    return invalid("messages", "the list is empty; give the chat to answer");
  request.chatInput = std::move(*input);
  request.chatInput.addGenerationPrompt = true;
  return llvm::Error::success();
}

} // namespace

llvm::Expected<CompletionRequest>
serve::parseCompletionRequest(llvm::StringRef body, bool chat) {
  auto parsed = parseJSON(body);
  if (!parsed)
    return invalid("", "the body is not JSON: " +
                           llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return invalid("", "the body is not a JSON object");
  FieldReader fields(*object);
  CompletionRequest request;
  request.chat = chat;
  if (llvm::Error error = fields.string("model", request.model))
    return std::move(error);
  if (llvm::Error error = chat ? readMessages(body, fields, request)
                               : readPrompt(fields, request))
    return std::move(error);

  std::optional<int64_t> maxTokens, completionTokens, topK, seed, n,
      topLogprobs;
  if (llvm::Error error = fields.integer("max_tokens", 1, INT32_MAX, maxTokens))
    return std::move(error);
  if (llvm::Error error = fields.integer("max_completion_tokens", 1, INT32_MAX,
                                         completionTokens))
    return std::move(error);
  if (completionTokens)
    maxTokens = completionTokens;
  if (maxTokens)
    request.maxTokens = unsigned(*maxTokens);
  SamplingOverrides &sampling = request.sampling;
  for (auto [key, out] : {std::pair<llvm::StringRef, std::optional<double> *>{
                              "temperature", &sampling.temperature},
                          {"top_p", &sampling.topP},
                          {"min_p", &sampling.minP},
                          {"presence_penalty", &sampling.presencePenalty},
                          {"frequency_penalty", &sampling.frequencyPenalty},
                          {"repetition_penalty", &sampling.repetitionPenalty}})
    if (llvm::Error error = fields.number(key, *out))
      return std::move(error);
  // -1 (vLLM) and 0 both mean every token.
  if (llvm::Error error = fields.integer("top_k", -1, INT32_MAX, topK))
    return std::move(error);
  if (topK)
    sampling.topK = std::max<int64_t>(*topK, 0);
  if (llvm::Error error = fields.integer("seed", INT64_MIN, INT64_MAX, seed))
    return std::move(error);
  if (seed)
    sampling.seed = uint64_t(*seed);
  if (llvm::Error error =
          sampling.over(SamplingOptions())
              .validate(/*asFields=*/true, ErrorId::RequestInvalid))
    return llvm::make_error<ApiError>(400, "invalid_request_error", "",
                                      llvm::toString(std::move(error)));
  if (llvm::Error error = readStops(fields, request))
    return std::move(error);
  if (llvm::Error error = fields.boolean("stream", request.stream))
    return std::move(error);
  if (const llvm::json::Value *options = fields.get("stream_options")) {
    const llvm::json::Object *object = options->getAsObject();
    if (!object)
      return invalid("stream_options", "expected an object");
    if (llvm::Error error =
            FieldReader(*object).boolean("include_usage", request.includeUsage))
      return withContext("`stream_options`: ", std::move(error));
  }
  if (llvm::Error error =
          fields.boolean("return_token_ids", request.returnTokenIds))
    return std::move(error);
  if (llvm::Error error = fields.integer("n", 1, kMaxChoices, n))
    return std::move(error);
  request.n = unsigned(n.value_or(1));
  if (chat) {
    if (llvm::Error error = fields.boolean("logprobs", request.logprobs))
      return std::move(error);
    if (llvm::Error error =
            fields.integer("top_logprobs", 0, kMaxTopLogprobs, topLogprobs))
      return std::move(error);
    if (topLogprobs && !request.logprobs)
      return invalid("top_logprobs", "needs `logprobs` true");
  } else {
    // A count: the chosen token's log-probability and that many others.
    if (llvm::Error error =
            fields.integer("logprobs", 0, kMaxTopLogprobs, topLogprobs))
      return std::move(error);
    request.logprobs = topLogprobs.has_value();
    bool echo = false;
    if (llvm::Error error = fields.boolean("echo", echo))
      return std::move(error);
    if (echo)
      return invalid("echo", "not supported; the reply holds the completion "
                             "alone");
    if (fields.get("suffix"))
      return invalid("suffix", "not supported (no fill-in-the-middle)");
  }
  request.topLogprobs = unsigned(topLogprobs.value_or(0));
  if (const llvm::json::Value *format = fields.get("response_format")) {
    const llvm::json::Object *object = format->getAsObject();
    std::optional<llvm::StringRef> type =
        object ? object->getString("type") : std::nullopt;
    if (!type)
      return invalid("response_format", "expected an object with a `type`");
    if (*type != "text")
      return invalid("response_format",
                     "`" + *type +
                         "` is not supported; this server generates text");
  }
  return request;
}

//===- ReplyParser.cpp - Reasoning and tool calls out of a reply ----------===//

#include "linnet/Serve/ReplyParser.h"

#include "linnet/Basic/JSON.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace linnet;
using namespace linnet::serve;

namespace {
constexpr llvm::StringLiteral kThinkOpen = "<think>", kThinkClose = "</think>",
                              kCallOpen = "<tool_call>",
                              kCallClose = "</tool_call>";

/// How many bytes at the end of `text` may begin `tag`.
size_t partialTag(llvm::StringRef text, llvm::StringRef tag) {
  for (size_t length = std::min(text.size(), tag.size() - 1); length > 0;
       --length)
    if (tag.starts_with(text.take_back(length)))
      return length;
  return 0;
}

std::string jsonText(const llvm::json::Value &value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << value;
  return out;
}
} // namespace

ReplyParser::ReplyParser(bool thinking, bool tools)
    : state(thinking ? State::Reasoning : State::Start), tools(tools) {}

ReplyDelta ReplyParser::push(llvm::StringRef text) {
  pending += text;
  ReplyDelta delta;
  run(delta, false);
  return delta;
}

ReplyDelta ReplyParser::finish() {
  ReplyDelta delta;
  run(delta, true);
  return delta;
}

void ReplyParser::run(ReplyDelta &delta, bool last) {
  for (;;) {
    llvm::StringRef text = pending;
    switch (state) {
    case State::Start: {
      // A reply may open its own reasoning; anything else is content.
      llvm::StringRef trimmed = text.ltrim();
      if (trimmed.starts_with(kThinkOpen)) {
        pending = trimmed.drop_front(kThinkOpen.size()).str();
        state = State::Reasoning;
        continue;
      }
      if (!last && kThinkOpen.starts_with(trimmed))
        return;
      state = State::Content;
      continue;
    }
    case State::Reasoning: {
      size_t close = text.find(kThinkClose);
      if (close == llvm::StringRef::npos) {
        size_t keep = last ? 0 : partialTag(text, kThinkClose);
        delta.reasoning += text.drop_back(keep).str();
        pending = text.take_back(keep).str();
        return;
      }
      delta.reasoning += text.take_front(close).str();
      pending = text.drop_front(close + kThinkClose.size()).str();
      state = State::Content;
      skip = "\r\n";
      continue;
    }
    case State::Content: {
      if (!skip.empty()) {
        llvm::StringRef rest = text.ltrim(skip);
        if (rest.empty() && !last) {
          pending.clear();
          return;
        }
        skip = "";
        pending = rest.str();
        text = pending;
      }
      size_t open = tools ? text.find(kCallOpen) : llvm::StringRef::npos;
      if (open == llvm::StringRef::npos) {
        size_t keep = last || !tools ? 0 : partialTag(text, kCallOpen);
        delta.content += text.drop_back(keep).str();
        pending = text.take_back(keep).str();
        return;
      }
      delta.content += text.take_front(open).str();
      pending = text.drop_front(open).str();
      state = State::ToolCall;
      continue;
    }
    case State::ToolCall: {
      size_t close = text.find(kCallClose);
      if (close == llvm::StringRef::npos) {
        // An unfinished block is text after all.
        if (last) {
          delta.content += text.str();
          pending.clear();
        }
        return;
      }
      ToolCall call;
      llvm::StringRef body = text.slice(kCallOpen.size(), close).trim();
      if (parseToolCall(body, call))
        delta.toolCalls.push_back(std::move(call));
      else
        delta.content += text.take_front(close + kCallClose.size()).str();
      pending = text.drop_front(close + kCallClose.size()).str();
      state = State::Content;
      skip = " \t\r\n";
      continue;
    }
    }
  }
}

bool serve::parseToolCall(llvm::StringRef body, ToolCall &call) {
  // JSON: {"name": ..., "arguments": {...}}.
  if (body.starts_with("{")) {
    auto parsed = parseJSON(body);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return false;
    }
    const llvm::json::Object *object = parsed->getAsObject();
    std::optional<llvm::StringRef> name =
        object ? object->getString("name") : std::nullopt;
    if (!name)
      return false;
    call.name = name->str();
    const llvm::json::Value *arguments = object->get("arguments");
    if (!arguments)
      call.arguments = "{}";
    else if (std::optional<llvm::StringRef> text = arguments->getAsString())
      call.arguments = text->str();
    else
      call.arguments = jsonText(*arguments);
    return true;
  }
  // Qwen3.5: <function=NAME> <parameter=P> VALUE </parameter> ... </function>.
  if (!body.consume_front("<function="))
    return false;
  auto [name, rest] = body.split('>');
  if (name.empty() || rest.data() == nullptr)
    return false;
  call.name = name.trim().str();
  llvm::json::Object arguments;
  rest = rest.trim();
  while (rest.consume_front("<parameter=")) {
    auto [parameter, after] = rest.split('>');
    size_t end = after.find("</parameter>");
    if (end == llvm::StringRef::npos)
      return false;
    llvm::StringRef value = after.take_front(end);
    // The template writes one newline around a value.
    value.consume_front("\n");
    value.consume_back("\n");
    // A value that reads as JSON (a number, an object) is that value.
    auto parsed = parseJSON(value);
    if (parsed && !value.trim().empty())
      arguments[parameter.trim()] = std::move(*parsed);
    else {
      if (!parsed)
        llvm::consumeError(parsed.takeError());
      arguments[parameter.trim()] = value.str();
    }
    rest =
        after.drop_front(end + llvm::StringRef("</parameter>").size()).trim();
  }
  if (!rest.consume_front("</function>") || !rest.trim().empty())
    return false;
  call.arguments = jsonText(llvm::json::Value(std::move(arguments)));
  return true;
}

//===- ReplyParser.h - Reasoning and tool calls out of a reply --*- C++ -*-===//
//
// Qwen's replies think inside `<think>…</think>` (often opened by the chat
// template itself) and call tools as `<tool_call>…</tool_call>` blocks
// holding JSON (`{"name": …, "arguments": {…}}`) or Qwen3.5's
// `<function=NAME><parameter=P>VALUE</parameter></function>`. OpenAI's API
// returns the reasoning as `reasoning_content` and the calls as
// `tool_calls`, apart from `content`; this splits the text as it streams,
// holding back only what may be the start of a tag.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_REPLYPARSER_H
#define LINNET_SERVE_REPLYPARSER_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace linnet::serve {

struct ToolCall {
  std::string name;
  /// The arguments as a JSON object's text.
  std::string arguments;
};

/// What one piece of text adds to the reply.
struct ReplyDelta {
  std::string reasoning, content;
  std::vector<ToolCall> toolCalls;
  bool empty() const {
    return reasoning.empty() && content.empty() && toolCalls.empty();
  }
};

class ReplyParser {
public:
  /// `thinking`: the prompt opened a `<think>` block the reply continues.
  /// `tools`: the request offered tools, so `<tool_call>` blocks are calls.
  ReplyParser(bool thinking, bool tools);

  ReplyDelta push(llvm::StringRef text);
  /// The end of the reply: what was held back.
  ReplyDelta finish();

private:
  enum class State { Start, Reasoning, Content, ToolCall };
  void run(ReplyDelta &delta, bool last);

  State state;
  bool tools;
  std::string pending;
  /// What is dropped before the next content: the newlines after
  /// `</think>`, the whitespace after a tool call.
  llvm::StringRef skip;
};

/// The call in a `<tool_call>` block's `body`, if it holds one.
bool parseToolCall(llvm::StringRef body, ToolCall &call);

} // namespace linnet::serve

#endif // LINNET_SERVE_REPLYPARSER_H

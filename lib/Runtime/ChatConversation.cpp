//===- ChatConversation.cpp - A chat, turn by turn, as a model reads it ---===//
//
// A follow-up turn is found by rendering the chat with a marker in place of
// the last reply's text: what the template writes after the marker (the
// reply's close, the new message, the next reply's opening) is the turn.
// That needs no knowledge of the template's tokens, and holds for every
// template that writes a reply's text where the reply goes.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/ChatConversation.h"

#include "linnet/Basic/Errors.h"

using namespace linnet;
using tmpl::Value;

namespace {

/// Stands for the last reply's text; a message holding it makes the turn
/// start over rather than be cut in the wrong place.
constexpr llvm::StringLiteral kReplyMarker = "LinnetReplyMarker4c1f9d7e";

Value message(llvm::StringRef role, llvm::StringRef text) {
  tmpl::Dict fields;
  fields.set("role", Value::string(role.str()));
  fields.set("content", Value::string(text.str()));
  return Value::dict(std::move(fields));
}

/// `input` with its own list of messages (Values share their items).
tmpl::ChatInput withMessages(const tmpl::ChatInput &input,
                             std::vector<Value> messages) {
  tmpl::ChatInput copy = input;
  copy.messages = Value::list(std::move(messages));
  return copy;
}

} // namespace

ChatConversation::ChatConversation(const tmpl::ChatTemplate &chatTemplate,
                                   const Tokenizer &tokenizer,
                                   tmpl::ChatInput chat)
    : chatTemplate(chatTemplate), tokenizer(tokenizer), chat(std::move(chat)) {
  this->chat.addGenerationPrompt = true;
  // Its own list, which the turns extend.
  this->chat = withMessages(this->chat, *this->chat.messages.items);
}

llvm::Expected<std::vector<int32_t>>
ChatConversation::encode(llvm::StringRef text) const {
  auto ids = tokenizer.encode(text);
  if (!ids)
    return withContext("the rendered chat: ", ids.takeError());
  return ids;
}

llvm::Expected<ChatTurn> ChatConversation::start() const {
  auto prompt = chatTemplate.render(chat);
  if (!prompt)
    return prompt.takeError();
  ChatTurn turn;
  turn.fromStart = true;
  auto ids = encode(*prompt);
  if (!ids)
    return ids.takeError();
  turn.ids = std::move(*ids);
  return turn;
}

void ChatConversation::addReply(llvm::StringRef text) {
  chat.messages.items->push_back(message("assistant", text));
}

void ChatConversation::addMessage(llvm::StringRef role, llvm::StringRef text) {
  chat.messages.items->push_back(message(role, text));
}

llvm::Expected<ChatTurn>
ChatConversation::addUserMessage(llvm::StringRef text) {
  std::vector<Value> messages = *chat.messages.items;
  bool afterReply = !messages.empty() &&
                    messages.back().is(Value::Kind::Dict) &&
                    [&] {
                      const Value *role = messages.back().map->find("role");
                      return role && role->is(Value::Kind::String) &&
                             role->text == "assistant";
                    }() &&
                    !text.contains(kReplyMarker);
  messages.push_back(message("user", text));
  tmpl::ChatInput next = withMessages(chat, messages);
  if (afterReply) {
    std::vector<Value> marked = messages;
    marked[marked.size() - 2] = message("assistant", kReplyMarker);
    auto rendered = chatTemplate.render(withMessages(chat, marked));
    if (!rendered)
      return rendered.takeError();
    size_t at = llvm::StringRef(*rendered).rfind(kReplyMarker);
    if (at != llvm::StringRef::npos) {
      auto ids = encode(
          llvm::StringRef(*rendered).drop_front(at + kReplyMarker.size()));
      if (!ids)
        return ids.takeError();
      chat = std::move(next);
      return ChatTurn{std::move(*ids), /*fromStart=*/false};
    }
  }
  // No place after the last reply: the whole chat again.
  std::swap(chat, next);
  auto turn = start();
  if (!turn)
    std::swap(chat, next);
  return turn;
}

//===- ChatConversation.h - A chat, turn by turn, as a model reads it -*- C++
//-*-===//
//
// `linnet run --chat` and built binaries hold a conversation with the
// model through the checkpoint's chat template. The model's state cannot be
// rewound (the DeltaNet layers' recurrent state), so a follow-up turn must
// be what comes after the state's last token: this renders, for each new
// message, only the template's close of the previous reply, the message and
// the opening of the next reply, and the model keeps its earlier replies as
// it generated them, as llama.cpp's chat does. A template that rewrites the
// past (Qwen's drops earlier turns' reasoning) would otherwise make every
// turn a prefill of the whole conversation.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_CHATCONVERSATION_H
#define LINNET_RUNTIME_CHATCONVERSATION_H

#include "linnet/Template/ChatTemplate.h"
#include "linnet/Text/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linnet {

/// The ids one turn feeds the model.
struct ChatTurn {
  std::vector<int32_t> ids;
  /// Whether they begin at position 0: the first turn, or one that cannot
  /// follow the state (the template renders no reply where the last one
  /// goes), which is then the whole conversation again.
  bool fromStart = false;
};

class ChatConversation {
public:
  /// `chat`'s messages, tools and variables (`enable_thinking`) rendered
  /// through `chatTemplate` and encoded with `tokenizer`; both outlive it.
  ChatConversation(const tmpl::ChatTemplate &chatTemplate,
                   const Tokenizer &tokenizer, tmpl::ChatInput chat);

  /// The whole chat so far with the start of the assistant's reply.
  llvm::Expected<ChatTurn> start() const;
  /// Records the model's reply to the last turn.
  void addReply(llvm::StringRef text);
  /// Adds a user message (which, when it fails, is not added); gives what
  /// the model reads after its last reply.
  llvm::Expected<ChatTurn> addUserMessage(llvm::StringRef text);
  /// Adds a message of `role` before the chat starts (`system`).
  void addMessage(llvm::StringRef role, llvm::StringRef text);

  size_t messageCount() const { return chat.messages.items->size(); }

private:
  llvm::Expected<std::vector<int32_t>> encode(llvm::StringRef text) const;

  const tmpl::ChatTemplate &chatTemplate;
  const Tokenizer &tokenizer;
  tmpl::ChatInput chat;
};

} // namespace linnet

#endif // LINNET_RUNTIME_CHATCONVERSATION_H

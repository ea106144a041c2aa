//===- ChatTemplate.h - A checkpoint's chat template and its tokens -*- C++
//-*-===//
//
// Where a checkpoint keeps its chat template (chat_template.jinja, else
// tokenizer_config.json's `chat_template`) and the special tokens the
// template reads (`bos_token`, `eos_token`, ... from tokenizer_config.json),
// and the variables transformers' apply_chat_template passes it, so that
// `linnet template`, `linnet run --chat` and built binaries render the
// same prompt.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_CHATTEMPLATE_H
#define LINNET_TEMPLATE_CHATTEMPLATE_H

#include "linnet/Template/Template.h"
#include "linnet/Template/Value.h"

#include <optional>
#include <string>

namespace linnet::tmpl {

/// What one rendering of a chat takes besides the template.
struct ChatInput {
  Value messages = Value::list({});
  Value tools = Value::none();
  bool addGenerationPrompt = false;
  /// Further variables (`enable_thinking`, `documents`, ...).
  Dict extra;
};

class ChatTemplate {
public:
  /// The template of the checkpoint (or tokenizer) folder `folder`.
  /// [TemplateMissing] when it has none.
  static llvm::Expected<ChatTemplate> loadFolder(llvm::StringRef folder);
  /// The template in `path` (a .jinja file), with the special tokens of
  /// `folder`'s tokenizer_config.json when `folder` is not empty.
  static llvm::Expected<ChatTemplate> loadFile(llvm::StringRef path,
                                               llvm::StringRef folder);

  /// The template `source` (from `origin`, a file name), with these special
  /// tokens.
  static llvm::Expected<ChatTemplate>
  parse(llvm::StringRef source, llvm::StringRef origin, Dict specialTokens);

  llvm::Expected<std::string>
  render(const ChatInput &input,
         uint64_t maxSteps = Template::kDefaultRenderSteps) const;

  /// Where the template came from (a file, or `file`'s field).
  const std::string &origin() const { return source; }
  /// Whether the template's text names `identifier` (a variable such as
  /// `enable_thinking`) as a whole word: whether setting it can matter.
  bool mentions(llvm::StringRef identifier) const;

private:
  ChatTemplate(Template compiled, std::optional<Template> toolUse,
               std::string source, std::string text, Dict specialTokens)
      : compiled(std::move(compiled)), toolUse(std::move(toolUse)),
        source(std::move(source)), text(std::move(text)),
        specialTokens(std::move(specialTokens)) {}
  Template compiled;
  /// A named list's `tool_use` template, which a chat with tools renders.
  std::optional<Template> toolUse;
  std::string source;
  /// The templates' text (both of a named list).
  std::string text;
  Dict specialTokens;
};

/// A chat as `linnet template --messages` and `linnet run --chat` read it:
/// a JSON list of messages, or an object whose `messages` is that list and
/// whose other members (`tools`, `enable_thinking`, ...) are variables.
/// Errors [MessagesMalformed] name `name` (the file).
llvm::Expected<ChatInput> parseChatInput(llvm::StringRef json,
                                         llvm::StringRef name);
/// The same for a document already parsed.
llvm::Expected<ChatInput> chatInputOf(const Value &document,
                                      llvm::StringRef name);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_CHATTEMPLATE_H

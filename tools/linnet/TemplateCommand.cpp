//===- TemplateCommand.cpp - `linnet template`: a chat rendered as a prompt
//===//
//
// Prints the prompt a checkpoint's chat template makes of a chat, exactly as
// the model will read it, so that a user can check it (and the tests can
// compare it with transformers' rendering). The template is the folder's,
// or a .jinja file given with --chat-template.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Template/ChatTemplate.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::templateCommand(
    "template", "Render a chat with a checkpoint's chat template");

namespace {

cl::opt<std::string> folder(cl::Positional,
                            cl::desc("<checkpoint or tokenizer folder>"),
                            cl::sub(templateCommand));
cl::opt<std::string>
    messagesFile("messages",
                 cl::desc("The chat: a JSON list of messages, or an object "
                          "with `messages` and further variables (`tools`, "
                          "`enable_thinking`, ...); `-` reads stdin"),
                 cl::value_desc("file"), cl::sub(templateCommand));
cl::opt<std::string> templateFile(
    "chat-template",
    cl::desc("Use the template in FILE instead of the folder's (the folder, "
             "if given, still supplies the special tokens)"),
    cl::value_desc("file"), cl::sub(templateCommand));
cl::opt<bool>
    addGenerationPrompt("add-generation-prompt",
                        cl::desc("End with the start of the assistant's turn"),
                        cl::sub(templateCommand));
cl::opt<std::string>
    thinking("thinking",
             cl::desc("`on` or `off`: sets the template's `enable_thinking` "
                      "(templates without it ignore it)"),
             cl::value_desc("on|off"), cl::sub(templateCommand));

} // namespace

int linnet::driver::runTemplate(const char *argv0) {
  if (messagesFile.empty())
    return reportError(ErrorId::OptionInvalid,
                       "template: give the chat with --messages FILE");
  if (folder.empty() && templateFile.empty())
    return reportError(ErrorId::OptionInvalid,
                       "template: give a checkpoint folder or --chat-template "
                       "FILE");
  if (!thinking.empty() && thinking != "on" && thinking != "off")
    return reportError(ErrorId::OptionInvalid,
                       "--thinking: expected `on` or `off`, found `" +
                           thinking + "`");
  auto chatTemplate = templateFile.empty()
                          ? tmpl::ChatTemplate::loadFolder(folder)
                          : tmpl::ChatTemplate::loadFile(templateFile, folder);
  if (!chatTemplate)
    return reportError(chatTemplate.takeError());
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(messagesFile);
  if (!buffer)
    return reportError(ErrorId::MessagesMalformed,
                       "--messages: cannot read `" + messagesFile +
                           "`: " + buffer.getError().message());
  auto input = tmpl::parseChatInput((*buffer)->getBuffer(), messagesFile);
  if (!input)
    return reportError(input.takeError());
  if (addGenerationPrompt)
    input->addGenerationPrompt = true;
  if (!thinking.empty())
    input->extra.set("enable_thinking", tmpl::Value::boolean(thinking == "on"));
  auto prompt = chatTemplate->render(*input);
  if (!prompt)
    return reportError(prompt.takeError());
  llvm::outs() << *prompt;
  return 0;
}

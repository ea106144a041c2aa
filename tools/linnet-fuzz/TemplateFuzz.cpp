//===- TemplateFuzz.cpp - libFuzzer target for chat templates and chats ---===//
//
// Feeds arbitrary bytes to the chat-template engine: the input up to its
// first NUL is a template, the rest a chat (messages JSON; an empty one means
// a two-message chat). Parse and render errors are answers; a crash, a
// sanitizer report, a hang or a render that differs between two runs of the
// same template is a bug. The step budget is smaller than a checkpoint's so
// that a hostile template ends well inside the fuzzer's timeout under ASan.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/ChatTemplate.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace linnet;
using namespace linnet::tmpl;

namespace {

constexpr uint64_t kFuzzRenderSteps = 200'000;

constexpr llvm::StringLiteral kDefaultChat =
    R"([{"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi <think>x</think> \u00e9"}])";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [source, chatText] = input.split('\0');
  Dict specialTokens;
  specialTokens.set("bos_token", Value::string("<s>"));
  specialTokens.set("eos_token", Value::string("</s>"));
  auto chatTemplate =
      ChatTemplate::parse(source, "fuzz.jinja", std::move(specialTokens));
  if (!chatTemplate) {
    llvm::consumeError(chatTemplate.takeError());
    return 0;
  }
  auto chat = parseChatInput(
      chatText.empty() ? llvm::StringRef(kDefaultChat) : chatText, "fuzz.json");
  if (!chat) {
    llvm::consumeError(chat.takeError());
    return 0;
  }
  for (bool generation : {false, true}) {
    chat->addGenerationPrompt = generation;
    auto first = chatTemplate->render(*chat, kFuzzRenderSteps);
    auto second = chatTemplate->render(*chat, kFuzzRenderSteps);
    if (bool(first) != bool(second) || (first && *first != *second)) {
      llvm::errs() << "two renders of one template and chat differ\n";
      std::abort();
    }
    if (!first)
      llvm::consumeError(first.takeError());
    if (!second)
      llvm::consumeError(second.takeError());
  }
  return 0;
}

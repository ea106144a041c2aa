//===- ChatTemplate.cpp - Finding and rendering a checkpoint's chat template
//===//
//
// transformers prefers chat_template.jinja to the `chat_template` field of
// tokenizer_config.json; the field is a string, or a list of named
// templates of which `default` is the one a chat uses (and `tool_use`, when
// there is one, the one a chat with tools uses). The special tokens
// are strings or AddedToken objects ({"content": ...}).
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/ChatTemplate.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace linnet;
using namespace linnet::tmpl;

namespace {

/// The special-token names transformers' special_tokens_map holds.
constexpr llvm::StringLiteral kSpecialTokenNames[] = {
    "bos_token", "eos_token", "unk_token",  "sep_token",
    "pad_token", "cls_token", "mask_token", "additional_special_tokens"};

llvm::Expected<std::string> readFile(llvm::StringRef path, ErrorId id) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(id, "cannot read `" + path +
                             "`: " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

/// A special token's text: a string, or an AddedToken's `content`.
std::optional<Value> tokenText(const Value &value) {
  if (value.is(Value::Kind::String))
    return value;
  if (value.is(Value::Kind::Dict))
    if (const Value *content = value.map->find("content");
        content && content->is(Value::Kind::String))
      return *content;
  return std::nullopt;
}

struct TokenizerConfig {
  Dict specialTokens;
  std::optional<std::string> chatTemplate;
  std::optional<std::string> toolUseTemplate;
};

llvm::Expected<TokenizerConfig> readTokenizerConfig(llvm::StringRef folder) {
  TokenizerConfig config;
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, "tokenizer_config.json");
  if (!llvm::sys::fs::exists(path))
    return config;
  auto text = readFile(path, ErrorId::TemplateMissing);
  if (!text)
    return text.takeError();
  auto json = parseJSONValue(*text, path, ErrorId::TemplateMissing);
  if (!json)
    return json.takeError();
  if (!json->is(Value::Kind::Dict))
    return makeError(ErrorId::TemplateMissing,
                     "`" + path + "`: the file is not a JSON object");
  for (llvm::StringRef name : kSpecialTokenNames) {
    const Value *value = json->map->find(name);
    if (!value)
      continue;
    if (value->is(Value::Kind::List)) {
      std::vector<Value> tokens;
      for (const Value &item : *value->items)
        if (auto token = tokenText(item))
          tokens.push_back(*token);
      config.specialTokens.set(name, Value::list(std::move(tokens)));
    } else if (auto token = tokenText(*value)) {
      config.specialTokens.set(name, *token);
    }
  }
  if (const Value *field = json->map->find("chat_template")) {
    if (field->is(Value::Kind::String)) {
      config.chatTemplate = field->text;
    } else if (field->is(Value::Kind::List)) {
      for (const Value &entry : *field->items) {
        if (!entry.is(Value::Kind::Dict))
          continue;
        const Value *name = entry.map->find("name");
        const Value *body = entry.map->find("template");
        if (!name || !body || !name->is(Value::Kind::String) ||
            !body->is(Value::Kind::String))
          continue;
        if (name->text == "default")
          config.chatTemplate = body->text;
        else if (name->text == "tool_use")
          config.toolUseTemplate = body->text;
      }
      if (!config.chatTemplate)
        return makeError(ErrorId::TemplateMissing,
                         "`" + path +
                             "`: `chat_template` lists no template named "
                             "`default`");
    } else if (!field->is(Value::Kind::None)) {
      return makeError(ErrorId::TemplateMissing,
                       "`" + path +
                           "`: `chat_template` must be a string or a list "
                           "of named templates, not " +
                           field->typeWithArticle());
    }
  }
  return config;
}

} // namespace

llvm::Expected<ChatTemplate> ChatTemplate::loadFile(llvm::StringRef path,
                                                    llvm::StringRef folder) {
  Dict specialTokens;
  if (!folder.empty()) {
    auto config = readTokenizerConfig(folder);
    if (!config)
      return config.takeError();
    specialTokens = std::move(config->specialTokens);
  }
  auto text = readFile(path, ErrorId::TemplateMissing);
  if (!text)
    return text.takeError();
  return parse(*text, path, std::move(specialTokens));
}

llvm::Expected<ChatTemplate> ChatTemplate::parse(llvm::StringRef source,
                                                 llvm::StringRef origin,
                                                 Dict specialTokens) {
  auto compiled = Template::parse(source, origin);
  if (!compiled)
    return compiled.takeError();
  return ChatTemplate(std::move(*compiled), std::nullopt, origin.str(),
                      source.str(), std::move(specialTokens));
}

llvm::Expected<ChatTemplate> ChatTemplate::loadFolder(llvm::StringRef folder) {
  if (!llvm::sys::fs::is_directory(folder))
    return makeError(ErrorId::TemplateMissing,
                     "`" + folder + "` is not a folder");
  llvm::SmallString<256> jinjaPath(folder);
  llvm::sys::path::append(jinjaPath, "chat_template.jinja");
  auto config = readTokenizerConfig(folder);
  if (!config)
    return config.takeError();
  if (llvm::sys::fs::exists(jinjaPath)) {
    auto text = readFile(jinjaPath, ErrorId::TemplateMissing);
    if (!text)
      return text.takeError();
    return parse(*text, jinjaPath, std::move(config->specialTokens));
  }
  if (!config->chatTemplate)
    return makeError(ErrorId::TemplateMissing,
                     "`" + folder +
                         "` has no chat template (neither chat_template.jinja "
                         "nor a `chat_template` in tokenizer_config.json)");
  llvm::SmallString<256> configPath(folder);
  llvm::sys::path::append(configPath, "tokenizer_config.json");
  std::string origin = (configPath + ":chat_template").str();
  auto compiled = Template::parse(*config->chatTemplate, origin);
  if (!compiled)
    return compiled.takeError();
  std::optional<Template> toolUse;
  if (config->toolUseTemplate) {
    auto parsed =
        Template::parse(*config->toolUseTemplate,
                        (configPath + ":chat_template:tool_use").str());
    if (!parsed)
      return parsed.takeError();
    toolUse.emplace(std::move(*parsed));
  }
  return ChatTemplate(std::move(*compiled), std::move(toolUse), origin,
                      *config->chatTemplate +
                          config->toolUseTemplate.value_or(""),
                      std::move(config->specialTokens));
}

bool ChatTemplate::mentions(llvm::StringRef identifier) const {
  auto isWordCharacter = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  llvm::StringRef rest = text;
  for (size_t at = rest.find(identifier); at != llvm::StringRef::npos;
       at = rest.find(identifier, at + 1)) {
    size_t end = at + identifier.size();
    if ((at == 0 || !isWordCharacter(rest[at - 1])) &&
        (end == rest.size() || !isWordCharacter(rest[end])))
      return true;
  }
  return false;
}

llvm::Expected<std::string> ChatTemplate::render(const ChatInput &input,
                                                 uint64_t maxSteps) const {
  // The variables of transformers' apply_chat_template, in its order: the
  // special tokens, then messages, tools, documents and
  // add_generation_prompt, then the caller's own.
  Dict variables = specialTokens;
  variables.set("messages", input.messages);
  variables.set("tools", input.tools);
  variables.set("documents", Value::none());
  variables.set("add_generation_prompt",
                Value::boolean(input.addGenerationPrompt));
  for (const auto &[name, value] : input.extra.entries)
    variables.set(name, value);
  if (toolUse && !input.tools.is(Value::Kind::None))
    return toolUse->render(variables, maxSteps);
  return compiled.render(variables, maxSteps);
}

llvm::Expected<ChatInput> tmpl::parseChatInput(llvm::StringRef json,
                                               llvm::StringRef name) {
  auto value = parseJSONValue(json, name, ErrorId::MessagesMalformed);
  if (!value)
    return value.takeError();
  return chatInputOf(*value, name);
}

llvm::Expected<ChatInput> tmpl::chatInputOf(const Value &document,
                                            llvm::StringRef name) {
  const Value *value = &document;
  ChatInput input;
  if (value->is(Value::Kind::List)) {
    input.messages = *value;
  } else if (value->is(Value::Kind::Dict)) {
    const Value *messages = value->map->find("messages");
    if (!messages)
      return makeError(ErrorId::MessagesMalformed,
                       "`" + name + "`: the object has no `messages`");
    input.messages = *messages;
    for (const auto &[key, item] : value->map->entries) {
      if (key == "messages")
        continue;
      if (key == "tools")
        input.tools = item;
      else if (key == "add_generation_prompt")
        input.addGenerationPrompt = item.truthy();
      else
        input.extra.set(key, item);
    }
  } else {
    return makeError(ErrorId::MessagesMalformed,
                     "`" + name +
                         "`: expected a list of messages or an object with "
                         "`messages`, found " +
                         value->typeWithArticle());
  }
  if (!input.messages.is(Value::Kind::List))
    return makeError(ErrorId::MessagesMalformed,
                     "`" + name + "`: `messages` must be a list, not " +
                         input.messages.typeWithArticle());
  for (size_t i = 0; i < input.messages.items->size(); ++i) {
    const Value &message = (*input.messages.items)[i];
    if (!message.is(Value::Kind::Dict))
      return makeError(ErrorId::MessagesMalformed,
                       "`" + name + "`: message " + llvm::Twine(i) + " is " +
                           message.typeWithArticle() + ", not an object");
    const Value *role = message.map->find("role");
    if (!role || !role->is(Value::Kind::String))
      return makeError(ErrorId::MessagesMalformed, "`" + name + "`: message " +
                                                       llvm::Twine(i) +
                                                       " has no string `role`");
  }
  return input;
}

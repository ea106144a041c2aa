//===- Tokenizer.cpp - A checkpoint's tokenizer.json, encoding and decoding
//===//
//
// Reading follows the file's fields one by one, so that every refusal names
// the field (`pre_tokenizer.pretokenizers[0].behavior`). Encoding follows
// HF `tokenizers`: added tokens are split out of the text as given, the
// rest is normalized, added tokens marked `normalized` are split out of
// that, and each remaining piece goes through the pre-tokenizer's steps to
// the BPE model. The byte-level step maps each byte to a printable
// character only so that vocabularies can be written as JSON strings; here
// the vocabulary is read back to bytes once, and the model works on bytes.
//
//===----------------------------------------------------------------------===//

#include "linnet/Text/Tokenizer.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Basic/UTF8.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <array>

using namespace linnet;
namespace json = llvm::json;

namespace {

/// GPT-2's byte-level alphabet: byte b is written as the character
/// `kByteCharacters[b]`; printable Latin-1 bytes as themselves, the others
/// from U+0100 on.
std::array<uint32_t, 256> byteCharacters() {
  std::array<uint32_t, 256> characters{};
  uint32_t next = 256;
  for (uint32_t b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
                     (b >= 0xAE && b <= 0xFF);
    characters[b] = printable ? b : next++;
  }
  return characters;
}

/// The byte each byte-level character stands for (-1: none).
const std::array<int16_t, 324> &byteOfCharacter() {
  static const std::array<int16_t, 324> table = [] {
    std::array<int16_t, 324> bytes;
    bytes.fill(-1);
    std::array<uint32_t, 256> characters = byteCharacters();
    for (uint32_t b = 0; b < 256; ++b)
      bytes[characters[b]] = int16_t(b);
    return bytes;
  }();
  return table;
}

/// The bytes a byte-level token string stands for, or none when one of its
/// characters is outside the alphabet.
std::optional<std::string> byteLevelBytes(llvm::StringRef token) {
  std::string bytes;
  const auto *cursor = reinterpret_cast<const llvm::UTF8 *>(token.begin());
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(token.end());
  while (cursor < end) {
    llvm::UTF32 character;
    if (llvm::convertUTF8Sequence(&cursor, end, &character,
                                  llvm::strictConversion) != llvm::conversionOK)
      return std::nullopt;
    if (character >= byteOfCharacter().size() ||
        byteOfCharacter()[character] < 0)
      return std::nullopt;
    bytes += char(byteOfCharacter()[character]);
  }
  return bytes;
}

/// The GPT-2 split a ByteLevel step with `use_regex` applies.
constexpr llvm::StringLiteral kGPT2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
    "\\s+(?!\\S)|\\s+";

/// Reads the fields of one tokenizer.json, each error naming its file.
class TokenizerReader {
public:
  explicit TokenizerReader(llvm::StringRef path) : path(path) {}

  llvm::Error malformed(const llvm::Twine &field, const llvm::Twine &what) {
    return makeError(ErrorId::TokenizerMalformed,
                     "`" + path + "`: `" + field + "` " + what);
  }
  llvm::Error unsupported(const llvm::Twine &field, const llvm::Twine &what) {
    return makeError(ErrorId::TokenizerUnsupported,
                     "`" + path + "`: `" + field + "` " + what);
  }

  /// `object[key]` as a string, or an error; `fallback` when absent.
  llvm::Expected<std::string>
  string(const json::Object &object, llvm::StringRef key,
         const llvm::Twine &field,
         std::optional<llvm::StringRef> fallback = std::nullopt) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null) {
      if (fallback)
        return fallback->str();
      return malformed(field, "is missing");
    }
    if (auto text = value->getAsString())
      return text->str();
    return malformed(field, "is not a string");
  }
  /// `object[key]` as a boolean (absent or null: `fallback`).
  llvm::Expected<bool> boolean(const json::Object &object, llvm::StringRef key,
                               const llvm::Twine &field, bool fallback) {
    const json::Value *value = object.get(key);
    if (!value || value->kind() == json::Value::Null)
      return fallback;
    if (auto flag = value->getAsBoolean())
      return *flag;
    return malformed(field, "is not true or false");
  }
  /// `value` as an object, or an error naming `field`.
  llvm::Expected<const json::Object *> object(const json::Value *value,
                                              const llvm::Twine &field) {
    if (!value)
      return malformed(field, "is missing");
    if (const json::Object *object = value->getAsObject())
      return object;
    return malformed(field, "is not an object");
  }

  /// The steps of `field` (the `value` there): the items of its `listKey`
  /// when it is a `Sequence`, else itself; each with its field for messages.
  using Steps = std::vector<std::pair<const json::Object *, std::string>>;
  llvm::Expected<Steps> steps(const json::Value *value, llvm::StringRef field,
                              llvm::StringRef listKey) {
    auto whole = object(value, field);
    if (!whole)
      return whole.takeError();
    auto type = string(**whole, "type", field + ".type");
    if (!type)
      return type.takeError();
    if (*type != "Sequence")
      return Steps{{*whole, field.str()}};
    const json::Array *list = (*whole)->getArray(listKey);
    if (!list)
      return malformed(field + "." + listKey, "is not a list");
    Steps steps;
    for (size_t i = 0; i < list->size(); ++i) {
      std::string item =
          (field + "." + listKey + "[" + llvm::Twine(i) + "]").str();
      auto step = object(&(*list)[i], item);
      if (!step)
        return step.takeError();
      steps.emplace_back(*step, item);
    }
    return steps;
  }

  llvm::StringRef path;
};

/// The position of the character before `at` in `text`.
size_t previousCharacter(llvm::StringRef text, size_t at) {
  do
    --at;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80);
  return at;
}

/// The character at `at` in valid UTF-8 `text`, and where the next begins.
std::pair<uint32_t, size_t> characterAt(llvm::StringRef text, size_t at) {
  const auto *cursor = reinterpret_cast<const llvm::UTF8 *>(text.data() + at);
  const auto *end = reinterpret_cast<const llvm::UTF8 *>(text.end());
  llvm::UTF32 character = 0xFFFD;
  if (llvm::convertUTF8Sequence(&cursor, end, &character,
                                llvm::lenientConversion) != llvm::conversionOK)
    return {0xFFFD, at + 1};
  return {character,
          size_t(reinterpret_cast<const char *>(cursor) - text.data())};
}

} // namespace

llvm::Expected<Tokenizer> Tokenizer::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(ErrorId::TokenizerMissing,
                     "cannot read `" + path +
                         "`: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<Tokenizer> Tokenizer::loadFolder(llvm::StringRef folder) {
  if (!llvm::sys::fs::is_directory(folder))
    return load(folder);
  llvm::SmallString<256> path(folder);
  llvm::sys::path::append(path, "tokenizer.json");
  if (!llvm::sys::fs::exists(path))
    return makeError(ErrorId::TokenizerMissing,
                     "`" + folder +
                         "` has no tokenizer.json; a Hugging Face checkpoint "
                         "ships one beside config.json, and linnet reads "
                         "text through it");
  return load(path);
}

llvm::Expected<Tokenizer> Tokenizer::parse(llvm::StringRef text,
                                           llvm::StringRef path) {
  TokenizerReader reader(path);
  auto parsed = parseJSON(text);
  if (!parsed)
    return makeError(ErrorId::TokenizerMalformed,
                     "`" + path + "` is not JSON " +
                         llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return makeError(ErrorId::TokenizerMalformed,
                     "`" + path + "` is not a JSON object");
  Tokenizer tokenizer;
  tokenizer.file = path.str();

  // What would change the ids or their number beyond the pipeline.
  for (llvm::StringRef field : {"truncation", "padding"})
    if (const json::Value *value = root->get(field);
        value && value->kind() != json::Value::Null)
      return reader.unsupported(field, "is set; linnet encodes whole texts, "
                                       "neither truncated nor padded");

  // The model: byte-level BPE.
  auto model = reader.object(root->get("model"), "model");
  if (!model)
    return model.takeError();
  auto modelType = reader.string(**model, "type", "model.type", "BPE");
  if (!modelType)
    return modelType.takeError();
  if (*modelType != "BPE")
    return reader.unsupported("model.type",
                              "is `" + *modelType +
                                  "`; linnet implements `BPE` models");
  for (llvm::StringRef field :
       {"continuing_subword_prefix", "end_of_word_suffix"}) {
    auto affix = reader.string(**model, field, "model." + field, "");
    if (!affix)
      return affix.takeError();
    if (!affix->empty())
      return reader.unsupported("model." + field,
                                "is `" + *affix +
                                    "`; linnet implements byte-level BPE, "
                                    "whose words have no affixes");
  }
  if (const json::Value *dropout = (*model)->get("dropout");
      dropout && dropout->kind() != json::Value::Null &&
      dropout->getAsNumber().value_or(1) != 0)
    return reader.unsupported("model.dropout",
                              "is set; BPE dropout draws different ids each "
                              "time, which is for training");
  auto byteFallback =
      reader.boolean(**model, "byte_fallback", "model.byte_fallback", false);
  if (!byteFallback)
    return byteFallback.takeError();
  if (*byteFallback)
    return reader.unsupported("model.byte_fallback",
                              "is true; linnet implements byte-level BPE, "
                              "which needs no fallback");
  auto ignoreMerges =
      reader.boolean(**model, "ignore_merges", "model.ignore_merges", false);
  if (!ignoreMerges)
    return ignoreMerges.takeError();

  auto vocab = reader.object((*model)->get("vocab"), "model.vocab");
  if (!vocab)
    return vocab.takeError();
  llvm::StringMap<int32_t> idOfToken;
  std::vector<std::string> modelBytes;
  int32_t largest = -1;
  for (const auto &[key, value] : **vocab) {
    // Real vocabularies number their tokens 0 to n - 1; holes would only
    // make room for nothing (and a huge id a huge table).
    std::optional<int64_t> id = jsonInteger(value);
    if (!id || *id < 0 || *id >= int64_t((*vocab)->size()))
      return reader.malformed("model.vocab[\"" + key.str() + "\"]",
                              "is not an id in [0, " +
                                  llvm::Twine((*vocab)->size()) +
                                  "), the ids of a vocabulary of " +
                                  llvm::Twine((*vocab)->size()) + " tokens");
    largest = std::max(largest, int32_t(*id));
    idOfToken[key.str()] = int32_t(*id);
  }
  tokenizer.bytes.resize(size_t(largest + 1));
  modelBytes.resize(size_t(largest + 1));
  std::vector<bool> taken(size_t(largest + 1), false);
  for (const auto &entry : idOfToken) {
    int32_t id = entry.second;
    if (taken[id])
      return reader.malformed("model.vocab", "gives the id " + llvm::Twine(id) +
                                                 " to two tokens");
    taken[id] = true;
    std::optional<std::string> decoded = byteLevelBytes(entry.first());
    // A token outside the byte-level alphabet cannot come from merges of
    // bytes; it decodes as written, as HF's ByteLevel decoder does.
    tokenizer.bytes[id] = decoded ? *decoded : entry.first().str();
    if (decoded)
      modelBytes[id] = std::move(*decoded);
  }

  const json::Value *mergesValue = (*model)->get("merges");
  const json::Array *mergeList =
      mergesValue ? mergesValue->getAsArray() : nullptr;
  if (mergesValue && !mergeList)
    return reader.malformed("model.merges", "is not a list");
  std::vector<BytePairEncoding::Merge> merges;
  if (mergeList) {
    merges.reserve(mergeList->size());
    for (size_t i = 0; i < mergeList->size(); ++i) {
      const json::Value &entry = (*mergeList)[i];
      std::string field = "model.merges[" + std::to_string(i) + "]";
      llvm::StringRef left, right;
      if (auto line = entry.getAsString()) {
        std::tie(left, right) = line->split(' ');
        if (left.empty() || right.empty() || right.contains(' '))
          return reader.malformed(field, "is `" + *line +
                                             "`, not two tokens split by "
                                             "one space");
      } else if (const json::Array *pair = entry.getAsArray();
                 pair && pair->size() == 2 && (*pair)[0].getAsString() &&
                 (*pair)[1].getAsString()) {
        left = *(*pair)[0].getAsString();
        right = *(*pair)[1].getAsString();
      } else {
        return reader.malformed(field, "is neither `\"a b\"` nor `[\"a\", "
                                       "\"b\"]`");
      }
      auto leftId = idOfToken.find(left), rightId = idOfToken.find(right);
      auto mergedId = idOfToken.find((left + right).str());
      for (auto [found, token] :
           {std::pair{leftId, left}, std::pair{rightId, right},
            std::pair{mergedId, llvm::StringRef()}})
        if (found == idOfToken.end())
          return reader.malformed(
              field, "merges into `" + (left + right) + "`" +
                         (token.empty() ? "" : " from `" + token + "`") +
                         ", which is not in `model.vocab`");
      merges.push_back({leftId->second, rightId->second, mergedId->second});
    }
  }

  // Added tokens, matched before the pipeline.
  if (const json::Value *list = root->get("added_tokens");
      list && list->kind() != json::Value::Null) {
    const json::Array *tokens = list->getAsArray();
    if (!tokens)
      return reader.malformed("added_tokens", "is not a list");
    int64_t largestAdded = -1;
    for (size_t i = 0; i < tokens->size(); ++i) {
      std::string field = "added_tokens[" + std::to_string(i) + "]";
      auto object = reader.object(&(*tokens)[i], field);
      if (!object)
        return object.takeError();
      AddedToken token;
      std::optional<int64_t> id = jsonInteger(**object, "id");
      if (!id || *id < 0 || *id >= (int64_t(1) << 31) - 1)
        return reader.malformed(field + ".id", "is not a token id");
      token.id = int32_t(*id);
      auto content = reader.string(**object, "content", field + ".content");
      if (!content)
        return content.takeError();
      if (content->empty())
        return reader.malformed(field + ".content", "is empty");
      if (auto at = firstInvalidUTF8(*content))
        return reader.malformed(field + ".content", "is not valid UTF-8");
      token.content = *content;
      auto singleWord = reader.boolean(**object, "single_word",
                                       field + ".single_word", false);
      auto special =
          reader.boolean(**object, "special", field + ".special", false);
      auto normalized = reader.boolean(**object, "normalized",
                                       field + ".normalized", !*special);
      auto lstrip =
          reader.boolean(**object, "lstrip", field + ".lstrip", false);
      auto rstrip =
          reader.boolean(**object, "rstrip", field + ".rstrip", false);
      for (llvm::Expected<bool> *flag :
           {&singleWord, &special, &normalized, &lstrip, &rstrip})
        if (!*flag)
          return flag->takeError();
      if (*singleWord)
        return reader.unsupported(field + ".single_word",
                                  "is true; linnet matches added tokens "
                                  "anywhere in a word");
      token.special = *special;
      token.normalized = *normalized;
      token.lstrip = *lstrip;
      token.rstrip = *rstrip;
      if (tokenizer.addedByContent.count(token.content))
        return reader.malformed(field + ".content",
                                "`" + token.content + "` is listed twice");
      // HF `tokenizers` does not take the ids as written: a token of the
      // vocabulary keeps its id, a new one gets the next after the
      // vocabulary and the tokens before it. A file whose ids differ would
      // encode differently here and there, so it is refused.
      int64_t expected = int64_t(idOfToken.size());
      if (auto inVocab = idOfToken.find(token.content);
          inVocab != idOfToken.end())
        expected = inVocab->second;
      else if (largestAdded >= expected)
        expected = largestAdded + 1;
      if (token.id != expected)
        return reader.malformed(
            field + ".id",
            "is " + llvm::Twine(token.id) + ", but `" + token.content +
                "` comes to " + llvm::Twine(expected) +
                " (after the vocabulary's " + llvm::Twine(idOfToken.size()) +
                " tokens and the added tokens before it), which is the id "
                "HF `tokenizers` gives it");
      if (!idOfToken.count(token.content))
        largestAdded = std::max<int64_t>(largestAdded, token.id);
      if (size_t(token.id) >= tokenizer.bytes.size())
        tokenizer.bytes.resize(size_t(token.id) + 1);
      tokenizer.bytes[token.id] =
          byteLevelBytes(token.content).value_or(token.content);
      tokenizer.addedByContent[token.content] = tokenizer.added.size();
      tokenizer.added.push_back(std::move(token));
    }
  }
  std::vector<std::string> raw, normalized;
  for (const AddedToken &token : tokenizer.added)
    (token.normalized ? normalized : raw).push_back(token.content);
  for (auto [list, pattern] :
       {std::pair{&raw, &tokenizer.rawAdded},
        std::pair{&normalized, &tokenizer.normalizedAdded}})
    if (!list->empty()) {
      auto compiled = SplitPattern::compileLiterals(*list);
      if (!compiled)
        return withContext("`" + path + "`: `added_tokens`: ",
                           compiled.takeError());
      *pattern = std::move(*compiled);
    }

  // The normalizer: Unicode normal forms.
  if (const json::Value *value = root->get("normalizer");
      value && value->kind() != json::Value::Null) {
    auto steps = reader.steps(value, "normalizer", "normalizers");
    if (!steps)
      return steps.takeError();
    std::vector<NormalForm> forms;
    for (const auto &[step, field] : *steps) {
      auto stepType = reader.string(*step, "type", field + ".type");
      if (!stepType)
        return stepType.takeError();
      std::optional<NormalForm> form = normalFormNamed(*stepType);
      if (!form)
        return reader.unsupported(field + ".type",
                                  "is `" + *stepType +
                                      "`; linnet implements the normal forms "
                                      "NFC, NFD, NFKC and NFKD");
      forms.push_back(*form);
    }
    tokenizer.normalizer.emplace(std::move(forms));
  }

  // The pre-tokenizer: regex splits and the byte-level map.
  {
    const json::Value *value = root->get("pre_tokenizer");
    if (!value || value->kind() == json::Value::Null)
      return reader.unsupported("pre_tokenizer",
                                "is missing; linnet implements byte-level "
                                "BPE, which needs a `ByteLevel` step");
    auto steps = reader.steps(value, "pre_tokenizer", "pretokenizers");
    if (!steps)
      return steps.takeError();
    bool byteLevelSeen = false;
    for (const auto &[step, field] : *steps) {
      auto stepType = reader.string(*step, "type", field + ".type");
      if (!stepType)
        return stepType.takeError();
      PreTokenizerStep parsedStep;
      if (*stepType == "Split") {
        parsedStep.kind = PreTokenizerStep::Kind::Split;
        auto behavior = reader.string(*step, "behavior", field + ".behavior");
        if (!behavior)
          return behavior.takeError();
        if (*behavior != "Isolated")
          return reader.unsupported(field + ".behavior",
                                    "is `" + *behavior +
                                        "`; linnet implements `Isolated`");
        auto invert = reader.boolean(*step, "invert", field + ".invert", false);
        if (!invert)
          return invert.takeError();
        if (*invert)
          return reader.unsupported(field + ".invert",
                                    "is true; linnet splits at the matches");
        auto pattern = reader.object(step->get("pattern"), field + ".pattern");
        if (!pattern)
          return pattern.takeError();
        llvm::Expected<std::shared_ptr<SplitPattern>> compiled = nullptr;
        if (auto regex = (*pattern)->getString("Regex"))
          compiled = SplitPattern::compileRegex(*regex);
        else if (auto literal = (*pattern)->getString("String"))
          compiled = SplitPattern::compileLiterals({literal->str()});
        else
          return reader.malformed(field + ".pattern",
                                  "has neither a `Regex` nor a `String`");
        if (!compiled)
          return withContext("`" + path + "`: `" + field + ".pattern`: ",
                             compiled.takeError());
        parsedStep.pattern = std::move(*compiled);
      } else if (*stepType == "ByteLevel") {
        parsedStep.kind = PreTokenizerStep::Kind::ByteLevel;
        auto prefix = reader.boolean(*step, "add_prefix_space",
                                     field + ".add_prefix_space", true);
        auto useRegex =
            reader.boolean(*step, "use_regex", field + ".use_regex", true);
        if (!prefix)
          return prefix.takeError();
        if (!useRegex)
          return useRegex.takeError();
        parsedStep.addPrefixSpace = *prefix;
        if (*useRegex) {
          auto compiled = SplitPattern::compileRegex(kGPT2Pattern);
          if (!compiled)
            return compiled.takeError();
          parsedStep.pattern = std::move(*compiled);
        }
        byteLevelSeen = true;
      } else {
        return reader.unsupported(field + ".type",
                                  "is `" + *stepType +
                                      "`; linnet implements `Split`, "
                                      "`ByteLevel` and a `Sequence` of them");
      }
      tokenizer.preTokenizer.push_back(std::move(parsedStep));
    }
    if (!byteLevelSeen)
      return reader.unsupported("pre_tokenizer",
                                "has no `ByteLevel` step; linnet implements "
                                "byte-level BPE");
  }

  // The post-processor may only map offsets; the decoder maps bytes back.
  if (const json::Value *value = root->get("post_processor");
      value && value->kind() != json::Value::Null) {
    auto object = reader.object(value, "post_processor");
    if (!object)
      return object.takeError();
    auto type = reader.string(**object, "type", "post_processor.type");
    if (!type)
      return type.takeError();
    if (*type != "ByteLevel")
      return reader.unsupported("post_processor.type",
                                "is `" + *type +
                                    "`; linnet adds no tokens around the "
                                    "text and implements `ByteLevel` only");
  }
  {
    const json::Value *value = root->get("decoder");
    if (!value || value->kind() == json::Value::Null)
      return reader.unsupported("decoder",
                                "is missing; linnet decodes byte-level "
                                "tokens (`ByteLevel`)");
    auto object = reader.object(value, "decoder");
    if (!object)
      return object.takeError();
    auto type = reader.string(**object, "type", "decoder.type");
    if (!type)
      return type.takeError();
    if (*type != "ByteLevel")
      return reader.unsupported(
          "decoder.type", "is `" + *type + "`; linnet implements `ByteLevel`");
  }

  tokenizer.model =
      std::make_shared<BytePairEncoding>(modelBytes, merges, *ignoreMerges);
  tokenizer.idByContent = std::move(idOfToken);
  for (const AddedToken &token : tokenizer.added)
    tokenizer.idByContent[token.content] = token.id;
  return std::move(tokenizer);
}

std::optional<int32_t> Tokenizer::tokenId(llvm::StringRef content) const {
  auto found = idByContent.find(content);
  if (found == idByContent.end())
    return std::nullopt;
  return found->second;
}

llvm::Error Tokenizer::preTokenize(size_t step, llvm::StringRef piece,
                                   std::vector<int32_t> &ids) const {
  if (piece.empty())
    return llvm::Error::success();
  if (step == preTokenizer.size())
    return model->encode(piece, ids);
  const PreTokenizerStep &current = preTokenizer[step];
  std::string prefixed;
  if (current.kind == PreTokenizerStep::Kind::ByteLevel &&
      current.addPrefixSpace && !piece.starts_with(" ")) {
    prefixed = " " + piece.str();
    piece = prefixed;
  }
  if (!current.pattern)
    return preTokenize(step + 1, piece, ids);
  // Isolated: each match is a piece, and so is each stretch between.
  size_t done = 0;
  if (llvm::Error error = current.pattern->forEachMatch(
          piece, [&](size_t begin, size_t end) -> llvm::Error {
            if (llvm::Error gap =
                    preTokenize(step + 1, piece.slice(done, begin), ids))
              return gap;
            done = end;
            return preTokenize(step + 1, piece.slice(begin, end), ids);
          }))
    return error;
  return preTokenize(step + 1, piece.substr(done), ids);
}

llvm::Error Tokenizer::splitAdded(
    llvm::StringRef text, const SplitPattern &tokens, std::vector<int32_t> &ids,
    llvm::function_ref<llvm::Error(llvm::StringRef)> between) const {
  size_t done = 0;
  if (llvm::Error error = tokens.forEachMatch(
          text, [&](size_t begin, size_t end) -> llvm::Error {
            if (begin < done) // inside the whitespace a token took
              return llvm::Error::success();
            const AddedToken &token =
                added[addedByContent.lookup(text.slice(begin, end))];
            if (token.lstrip)
              while (begin > done) {
                size_t before = previousCharacter(text, begin);
                if (!isUnicodeWhiteSpace(characterAt(text, before).first))
                  break;
                begin = before;
              }
            if (llvm::Error gap = between(text.slice(done, begin)))
              return gap;
            ids.push_back(token.id);
            if (token.rstrip)
              while (end < text.size()) {
                auto [character, next] = characterAt(text, end);
                if (!isUnicodeWhiteSpace(character))
                  break;
                end = next;
              }
            done = end;
            return llvm::Error::success();
          }))
    return error;
  return between(text.substr(done));
}

llvm::Expected<std::vector<int32_t>>
Tokenizer::encode(llvm::StringRef text) const {
  if (std::optional<size_t> at = firstInvalidUTF8(text))
    return makeError(ErrorId::TextInvalid,
                     "the text is not valid UTF-8: byte " + llvm::Twine(*at) +
                         " (" + llvm::utohexstr(uint8_t(text[*at])) +
                         " hex) does not begin a well-formed sequence");
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  auto normalizedPiece = [&](llvm::StringRef piece) -> llvm::Error {
    if (piece.empty())
      return llvm::Error::success();
    if (!normalizer)
      return preTokenize(0, piece, ids);
    auto normalized = normalizer->apply(piece);
    if (!normalized)
      return normalized.takeError();
    if (!normalizedAdded)
      return preTokenize(0, *normalized, ids);
    return splitAdded(
        *normalized, *normalizedAdded, ids,
        [&](llvm::StringRef rest) { return preTokenize(0, rest, ids); });
  };
  llvm::Error error = rawAdded
                          ? splitAdded(text, *rawAdded, ids, normalizedPiece)
                          : normalizedPiece(text);
  if (error)
    return std::move(error);
  return ids;
}

llvm::Expected<std::string>
Tokenizer::decodeBytes(llvm::ArrayRef<int32_t> ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || id >= vocabularySize() || bytes[id].empty())
      return makeError(ErrorId::TokenOutOfVocabulary,
                       "id " + llvm::Twine(id) + " (at " + llvm::Twine(i) +
                           ") is not a token of `" + file +
                           "`, whose ids are below " +
                           llvm::Twine(vocabularySize()));
    out += bytes[id];
  }
  return out;
}

llvm::Expected<std::string>
Tokenizer::decode(llvm::ArrayRef<int32_t> ids) const {
  auto raw = decodeBytes(ids);
  if (!raw)
    return raw.takeError();
  return replaceInvalidUTF8(*raw);
}

llvm::Expected<std::string> TextStream::push(int32_t id) {
  auto piece = tokenizer.decodeBytes(id);
  if (!piece)
    return piece.takeError();
  pending += *piece;
  // Hold back a character whose last bytes have not come yet.
  size_t keep = pending.size();
  for (size_t back = 1; back <= std::min<size_t>(3, pending.size()); ++back) {
    unsigned char c =
        static_cast<unsigned char>(pending[pending.size() - back]);
    if ((c & 0xC0) == 0x80)
      continue; // a continuation byte: look further back
    size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (c >= 0xC2 && c <= 0xF4 && length > back)
      keep = pending.size() - back;
    break;
  }
  std::string text =
      replaceInvalidUTF8(llvm::StringRef(pending).take_front(keep));
  pending.erase(0, keep);
  return text;
}

std::string TextStream::finish() {
  std::string text = replaceInvalidUTF8(pending);
  pending.clear();
  return text;
}

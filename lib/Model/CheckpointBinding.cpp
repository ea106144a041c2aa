//===- CheckpointBinding.cpp - Reading the model's name map ---------------===//
//
// Parses `checkpoint_binding.json` with llvm::json, reporting the file and
// the JSON path of anything malformed (its `config` object is ConfigRules');
// matches dotted name patterns segment by segment; and fills name templates
// with index expressions (`4 * g + j`), exactly, with FieldExpression.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/CheckpointBinding.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Model/FieldExpression.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace linnet;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Name patterns and templates
//===----------------------------------------------------------------------===//

llvm::Expected<NamePattern> NamePattern::parse(llvm::StringRef text) {
  NamePattern pattern;
  pattern.source = text.str();
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, '.');
  for (llvm::StringRef part : parts) {
    Segment segment;
    if (part.starts_with("{")) {
      if (!part.ends_with("}") || part.size() < 3)
        return llvm::createStringError("pattern `" + text +
                                       "`: a placeholder is a whole segment "
                                       "`{name}` or `{name*}`");
      llvm::StringRef name = part.drop_front().drop_back();
      segment.capture = true;
      segment.many = name.consume_back("*");
      segment.text = name.str();
    } else if (part.empty() || part.contains('{') || part.contains('}')) {
      return llvm::createStringError("pattern `" + text + "`: segment `" +
                                     part +
                                     "` is neither a name nor a placeholder");
    } else {
      segment.text = part.str();
    }
    pattern.segments.push_back(std::move(segment));
  }
  return pattern;
}

bool NamePattern::matchFrom(size_t segment, size_t part,
                            llvm::ArrayRef<llvm::StringRef> parts,
                            std::map<std::string, llvm::StringRef> &captures,
                            std::vector<bool> &failed) const {
  if (segment == segments.size())
    return part == parts.size();
  if (part == parts.size())
    return false;
  size_t key = segment * (parts.size() + 1) + part;
  if (failed[key])
    return false;
  const Segment &current = segments[segment];
  bool matched = false;
  if (!current.capture) {
    matched = parts[part] == current.text &&
              matchFrom(segment + 1, part + 1, parts, captures, failed);
  } else if (!current.many) {
    captures[current.text] = parts[part];
    matched = matchFrom(segment + 1, part + 1, parts, captures, failed);
  } else {
    // Shortest first, so that later literals anchor as early as they can.
    // The parts are slices of one name, so parts [part, end) joined by `.`
    // are the text from the first's start to the last's end.
    const char *start = parts[part].data();
    for (size_t end = part + 1; end <= parts.size() && !matched; ++end) {
      captures[current.text] =
          llvm::StringRef(start, parts[end - 1].end() - start);
      matched = matchFrom(segment + 1, end, parts, captures, failed);
    }
  }
  if (!matched)
    failed[key] = true;
  return matched;
}

std::optional<std::map<std::string, std::string>>
NamePattern::match(llvm::StringRef name) const {
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, '.');
  std::map<std::string, llvm::StringRef> captures;
  std::vector<bool> failed((segments.size() + 1) * (parts.size() + 1));
  if (!matchFrom(0, 0, parts, captures, failed))
    return std::nullopt;
  std::map<std::string, std::string> texts;
  for (const auto &[capture, text] : captures)
    texts[capture] = text.str();
  return texts;
}

llvm::Expected<std::string>
linnet::expandTemplate(llvm::StringRef text,
                       const std::map<std::string, std::string> &captures) {
  std::string out;
  while (!text.empty()) {
    size_t open = text.find('{');
    out += text.take_front(open).str();
    if (open == llvm::StringRef::npos)
      break;
    size_t close = text.find('}', open);
    if (close == llvm::StringRef::npos)
      return llvm::createStringError("template `" + text + "`: unclosed `{`");
    llvm::StringRef inner = text.slice(open + 1, close).trim();
    text = text.drop_front(close + 1);
    if (auto it = captures.find(inner.str()); it != captures.end()) {
      out += it->second;
      continue;
    }
    std::map<std::string, int64_t> integers;
    for (const auto &[name, value] : captures) {
      int64_t integer;
      if (!llvm::StringRef(value).getAsInteger(10, integer))
        integers[name] = integer;
    }
    auto value = evaluateIntegerExpression(inner, integers);
    if (!value)
      return value.takeError();
    out += std::to_string(*value);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// The file
//===----------------------------------------------------------------------===//

namespace {

/// Reads one JSON file's fields, building error messages with the JSON path.
class BindingReader {
public:
  explicit BindingReader(llvm::StringRef file) : file(file) {}

  llvm::Error error(const llvm::Twine &jsonPath, const llvm::Twine &message) {
    return makeError(ErrorId::BindingRulesInvalid,
                     "checkpoint binding `" + file + "`: `" + jsonPath +
                         "`: " + message);
  }
  llvm::Expected<std::vector<std::string>>
  strings(const json::Value *value, const std::string &jsonPath) {
    std::vector<std::string> out;
    if (!value)
      return out;
    const json::Array *array = value->getAsArray();
    if (!array)
      return error(jsonPath, "expected a list of strings");
    for (size_t i = 0; i < array->size(); ++i) {
      auto text = (*array)[i].getAsString();
      if (!text)
        return error(jsonPath + "[" + std::to_string(i) + "]",
                     "expected a string");
      out.push_back(text->str());
    }
    return out;
  }
  llvm::Expected<std::string> string(const json::Object &object,
                                     llvm::StringRef key,
                                     const std::string &jsonPath) {
    auto text = object.getString(key);
    if (!text)
      return error(jsonPath + "." + key, "expected a string");
    return text->str();
  }

  std::string file;
};

} // namespace

llvm::Expected<CheckpointBinding>
CheckpointBinding::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError(ErrorId::BindingRulesInvalid,
                     "cannot read `" + path +
                         "`: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}

llvm::Expected<CheckpointBinding>
CheckpointBinding::parse(llvm::StringRef text, llvm::StringRef path) {
  BindingReader reader(path);
  auto parsed = parseJSON(text);
  if (!parsed)
    return makeError(ErrorId::BindingRulesInvalid,
                     "checkpoint binding `" + path + "` is not valid JSON: " +
                         llvm::toString(parsed.takeError()));
  const json::Object *root = parsed->getAsObject();
  if (!root)
    return reader.error("$", "expected an object");
  CheckpointBinding binding;
  binding.file = path.str();

  const json::Object *config = root->getObject("config");
  binding.configRules = ConfigRules(config, path);
  if (binding.configRules.templateMalformed())
    return reader.error("config.template", "expected an object");
  for (const ConfigRule &rule : binding.configRules.rules())
    if (rule.form == ConfigRule::Form::Malformed) {
      auto fields =
          reader.strings(config->getObject("generics")->get(rule.generic),
                         "config.generics." + rule.generic);
      if (!fields)
        return fields.takeError();
    }

  const json::Object *parameters = root->getObject("parameters");
  if (!parameters)
    return reader.error("parameters", "expected an object");
  const std::string base = "parameters";

  auto prefixes =
      reader.strings(parameters->get("prefixes"), base + ".prefixes");
  if (!prefixes)
    return prefixes.takeError();
  binding.prefixList = *prefixes;
  if (binding.prefixList.empty())
    binding.prefixList.push_back("");
  auto unprefixed =
      reader.strings(parameters->get("unprefixed"), base + ".unprefixed");
  if (!unprefixed)
    return unprefixed.takeError();
  binding.unprefixed = *unprefixed;
  auto ignore = reader.strings(parameters->get("ignore"), base + ".ignore");
  if (!ignore)
    return ignore.takeError();
  for (size_t i = 0; i < ignore->size(); ++i) {
    auto glob = llvm::GlobPattern::create((*ignore)[i]);
    if (!glob)
      return reader.error(base + ".ignore[" + std::to_string(i) + "]",
                          llvm::toString(glob.takeError()));
    binding.ignored.push_back((*ignore)[i]);
  }

  if (const json::Value *renames = parameters->get("rename")) {
    const json::Array *array = renames->getAsArray();
    if (!array)
      return reader.error(base + ".rename", "expected a list of rules");
    for (size_t i = 0; i < array->size(); ++i) {
      std::string where = base + ".rename[" + std::to_string(i) + "]";
      const json::Object *rule = (*array)[i].getAsObject();
      if (!rule)
        return reader.error(where, "expected an object with `from` and `to`");
      auto from = reader.string(*rule, "from", where);
      if (!from)
        return from.takeError();
      auto to = reader.string(*rule, "to", where);
      if (!to)
        return to.takeError();
      auto pattern = NamePattern::parse(*from);
      if (!pattern)
        return reader.error(where + ".from",
                            llvm::toString(pattern.takeError()));
      binding.renames.push_back({std::move(*pattern), *to});
    }
  }

  if (const json::Value *layouts = parameters->get("stacked")) {
    const json::Array *array = layouts->getAsArray();
    if (!array)
      return reader.error(base + ".stacked", "expected a list of layouts");
    for (size_t i = 0; i < array->size(); ++i) {
      std::string where = base + ".stacked[" + std::to_string(i) + "]";
      const json::Object *layout = (*array)[i].getAsObject();
      if (!layout)
        return reader.error(where,
                            "expected an object with `fused`, `index` and "
                            "`parts`");
      auto fused = reader.string(*layout, "fused", where);
      if (!fused)
        return fused.takeError();
      auto index = reader.string(*layout, "index", where);
      if (!index)
        return index.takeError();
      auto parts = reader.strings(layout->get("parts"), where + ".parts");
      if (!parts)
        return parts.takeError();
      if (parts->empty())
        return reader.error(where + ".parts", "expected at least one name");
      auto pattern = NamePattern::parse(*fused);
      if (!pattern)
        return reader.error(where + ".fused",
                            llvm::toString(pattern.takeError()));
      binding.stacked.push_back({std::move(*pattern), *index, *parts});
    }
  }

  if (const json::Value *layers = parameters->get("layer_types")) {
    std::string where = base + ".layer_types";
    const json::Object *object = layers->getAsObject();
    if (!object)
      return reader.error(where, "expected an object with `field`, `count` and "
                                 "`pattern`");
    auto field = reader.string(*object, "field", where);
    if (!field)
      return field.takeError();
    auto count = reader.string(*object, "count", where);
    if (!count)
      return count.takeError();
    auto pattern = reader.strings(object->get("pattern"), where + ".pattern");
    if (!pattern)
      return pattern.takeError();
    if (pattern->empty())
      return reader.error(where + ".pattern", "expected at least one type");
    binding.layerField = *field;
    binding.layerCount = *count;
    binding.layerPattern = *pattern;
  }
  return binding;
}

llvm::Expected<std::string>
CheckpointBinding::checkpointName(llvm::StringRef linnetPath) const {
  std::string name = linnetPath.str();
  for (const Rename &rename : renames) {
    auto captures = rename.from.match(name);
    if (!captures)
      continue;
    auto expanded = expandTemplate(rename.to, *captures);
    if (!expanded)
      return makeError(ErrorId::BindingRulesInvalid,
                       "checkpoint binding `" + file + "`: renaming `" + name +
                           "` by `" + rename.from.text() +
                           "`: " + llvm::toString(expanded.takeError()));
    if (expanded->size() > kMaxCheckpointNameBytes)
      return makeError(
          ErrorId::BindingRulesInvalid,
          "checkpoint binding `" + file + "`: renaming `" + name + "` by `" +
              rename.from.text() + "` gives a name of " +
              std::to_string(expanded->size()) + " bytes, more than the " +
              std::to_string(kMaxCheckpointNameBytes) +
              " a tensor name may have");
    name = std::move(*expanded);
  }
  return name;
}

bool CheckpointBinding::isUnprefixed(llvm::StringRef name) const {
  return llvm::is_contained(unprefixed, name);
}

std::string CheckpointBinding::withPrefix(llvm::StringRef name,
                                          llvm::StringRef prefix) const {
  if (isUnprefixed(name))
    return name.str();
  return (prefix + name).str();
}

bool CheckpointBinding::isIgnored(llvm::StringRef name) const {
  // A GlobPattern refers to its text, so it is built where it is used.
  for (const std::string &text : ignored) {
    auto glob = llvm::GlobPattern::create(text);
    if (glob && glob->match(name))
      return true;
    llvm::consumeError(glob.takeError());
  }
  return false;
}

std::string
CheckpointBinding::detectPrefix(llvm::ArrayRef<std::string> names) const {
  for (const std::string &prefix : prefixList)
    for (const std::string &name : names)
      if (!isIgnored(name) && !isUnprefixed(name) &&
          llvm::StringRef(name).starts_with(prefix))
        return prefix;
  return prefixList.front();
}

std::optional<std::vector<std::string>>
CheckpointBinding::stackedPartNames(llvm::StringRef fusedName,
                                    int64_t index) const {
  for (const Stacked &layout : stacked) {
    auto captures = layout.fused.match(fusedName);
    if (!captures)
      continue;
    (*captures)[layout.index] = std::to_string(index);
    std::vector<std::string> names;
    for (const std::string &part : layout.parts) {
      auto name = expandTemplate(part, *captures);
      if (!name) {
        llvm::consumeError(name.takeError());
        return std::nullopt;
      }
      names.push_back(std::move(*name));
    }
    return names;
  }
  return std::nullopt;
}

std::vector<std::string> CheckpointBinding::layerTypes(int64_t count) const {
  std::vector<std::string> types;
  if (layerPattern.empty())
    return types;
  for (int64_t i = 0; i < count; ++i)
    types.push_back(layerPattern[i % layerPattern.size()]);
  return types;
}

llvm::Error CheckpointBinding::checkLayerTypes(const json::Object &config,
                                               llvm::StringRef where) const {
  if (layerPattern.empty())
    return llvm::Error::success();
  const json::Value *value = config.get(layerField);
  if (!value)
    return llvm::Error::success(); // the default pattern applies
  std::string field =
      (configRules.section().empty() ? "" : configRules.section() + ".") +
      layerField;
  std::string patternText;
  for (const std::string &type : layerPattern)
    patternText += (patternText.empty() ? "`" : ", `") + type + "`";
  std::string rule =
      "; the model binds layers in the repeating pattern " + patternText;
  auto fail = [&](const llvm::Twine &message) {
    return makeError(ErrorId::CheckpointMisfit, "`" + where + "`: " + message);
  };
  const json::Array *types = value->getAsArray();
  if (!types)
    return fail("`" + field + "` is not a list");
  std::optional<int64_t> count;
  if (const json::Value *countValue = config.get(layerCount))
    count = jsonInteger(*countValue);
  if (count && int64_t(types->size()) != *count)
    return fail("`" + field + "` lists " + llvm::Twine(types->size()) +
                " layers, but `" + layerCount + "` is " + llvm::Twine(*count));
  for (size_t i = 0; i < types->size(); ++i) {
    auto type = (*types)[i].getAsString();
    const std::string &expected = layerPattern[i % layerPattern.size()];
    if (!type || *type != expected) {
      std::string found;
      llvm::raw_string_ostream os(found);
      os << (*types)[i];
      return fail("`" + field + "[" + llvm::Twine(i) + "]` is " + found +
                  ", expected \"" + expected + "\"" + rule);
    }
  }
  if (types->size() % layerPattern.size() != 0)
    return fail("`" + field + "` lists " + llvm::Twine(types->size()) +
                " layers, not a whole number of repetitions" + rule);
  return llvm::Error::success();
}

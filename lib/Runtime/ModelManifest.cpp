//===- ModelManifest.cpp - A bound model's facts as JSON ------------------===//
//
// The manifest's JSON form (written by `linnet build` into the binary) and
// the check that a checkpoint's config.json describes the model a binary was
// built for, evaluated from the binding's config rules without the sources.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/ModelManifest.h"

#include "linnet/Basic/Errors.h"

#include "linnet/Basic/JSON.h"
#include "linnet/Model/ConfigRules.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace linnet;
namespace json = llvm::json;

namespace {

json::Value parameterToJSON(const ModelParameter &param) {
  json::Array shape;
  for (int64_t size : param.shape)
    shape.push_back(size);
  json::Object object{{"path", param.path},
                      {"shape", std::move(shape)},
                      {"element", elementTypeName(param.element)},
                      {"optional", param.optional},
                      {"block", param.block}};
  if (param.contextAxis)
    object["context_axis"] = int64_t(*param.contextAxis);
  return object;
}

llvm::Error invalid(const llvm::Twine &what) {
  return makeError(ErrorId::ManifestInvalid,
                   "the model manifest is invalid: " + what);
}

llvm::Expected<std::vector<ModelParameter>>
parametersFromJSON(const json::Object &root, llvm::StringRef key) {
  std::vector<ModelParameter> result;
  const json::Array *list = root.getArray(key);
  if (!list)
    return invalid("no list `" + key + "`");
  for (const json::Value &value : *list) {
    const json::Object *object = value.getAsObject();
    const json::Array *shape = object ? object->getArray("shape") : nullptr;
    auto path = object ? object->getString("path") : std::nullopt;
    auto element = object ? object->getString("element") : std::nullopt;
    auto type = element ? parseElementType(*element) : std::nullopt;
    if (!shape || !path || !type)
      return invalid("an element of `" + key +
                     "` lacks path, shape or element");
    ModelParameter param;
    param.path = path->str();
    param.element = *type;
    param.optional = object->getBoolean("optional").value_or(false);
    param.block = object->getString("block").value_or("").str();
    for (const json::Value &size : *shape)
      param.shape.push_back(jsonInteger(size).value_or(0));
    if (std::optional<int64_t> axis = jsonInteger(*object, "context_axis")) {
      if (*axis < 1 || *axis >= int64_t(param.shape.size()))
        return invalid("`" + param.path + "`'s context axis " +
                       llvm::Twine(*axis) + " is not one of its axes");
      param.contextAxis = unsigned(*axis);
    }
    result.push_back(std::move(param));
  }
  return result;
}

} // namespace

json::Value ModelManifest::toJSON() const {
  json::Array genericList, parameterList, stateList, entryList;
  for (size_t i = 0; i < generics.size(); ++i) {
    const BoundGeneric &generic = generics[i];
    json::Object object{{"name", generic.name},
                        {"origin", generic.origin},
                        {"fromConfig", i < fromConfig.size() && fromConfig[i]}};
    if (generic.kind == GenericKind::Float)
      object["element"] = elementTypeName(generic.element);
    else
      object["size"] = generic.size;
    genericList.push_back(std::move(object));
  }
  for (const ModelParameter &param : parameters)
    parameterList.push_back(parameterToJSON(param));
  for (const ModelParameter &state : states)
    stateList.push_back(parameterToJSON(state));
  for (const std::string &entry : entries)
    entryList.push_back(entry);
  return json::Object{{"format", "linnet-model-manifest/1"},
                      {"model", model},
                      {"generics", std::move(genericList)},
                      {"parameters", std::move(parameterList)},
                      {"states", std::move(stateList)},
                      {"entries", std::move(entryList)},
                      {"bindingPath", bindingPath},
                      {"binding", bindingText}};
}

llvm::Expected<ModelManifest> ModelManifest::parse(llvm::StringRef text) {
  auto value = parseJSON(text);
  if (!value)
    return invalid(llvm::toString(value.takeError()));
  const json::Object *root = value->getAsObject();
  if (!root || root->getString("format") != "linnet-model-manifest/1")
    return invalid("not a `linnet-model-manifest/1` document");
  ModelManifest manifest;
  manifest.model = root->getString("model").value_or("").str();
  manifest.bindingPath = root->getString("bindingPath").value_or("").str();
  manifest.bindingText = root->getString("binding").value_or("").str();
  if (const json::Array *generics = root->getArray("generics"))
    for (const json::Value &entry : *generics) {
      const json::Object *object = entry.getAsObject();
      if (!object || !object->getString("name"))
        return invalid("a generic without a name");
      BoundGeneric generic;
      generic.name = object->getString("name")->str();
      generic.origin = object->getString("origin").value_or("").str();
      if (auto element = object->getString("element")) {
        generic.kind = GenericKind::Float;
        generic.element = parseElementType(*element).value_or(ElementType::F32);
      } else {
        generic.size = jsonInteger(*object, "size").value_or(0);
      }
      manifest.generics.push_back(std::move(generic));
      manifest.fromConfig.push_back(
          object->getBoolean("fromConfig").value_or(false));
    }
  auto parameters = parametersFromJSON(*root, "parameters");
  if (!parameters)
    return parameters.takeError();
  manifest.parameters = std::move(*parameters);
  auto states = parametersFromJSON(*root, "states");
  if (!states)
    return states.takeError();
  manifest.states = std::move(*states);
  if (const json::Array *entries = root->getArray("entries"))
    for (const json::Value &entry : *entries)
      if (auto name = entry.getAsString())
        manifest.entries.push_back(name->str());
  return manifest;
}

llvm::Expected<CheckpointBinding> ModelManifest::binding() const {
  return CheckpointBinding::parse(bindingText, bindingPath);
}

ElementType ModelManifest::logitElement() const {
  for (const BoundGeneric &generic : generics)
    if (generic.name == "T" && generic.kind == GenericKind::Float)
      return generic.element;
  return ElementType::F32;
}

bool ModelManifest::hasEntry(llvm::StringRef name) const {
  return llvm::is_contained(entries, name);
}

llvm::Error ModelManifest::checkConfigAgrees(
    llvm::StringRef dir,
    llvm::function_ref<void(const llvm::Twine &)> warning) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "config.json");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "--checkpoint: cannot read `" + path +
                         "`: " + buffer.getError().message());
  auto config = parseJSON((*buffer)->getBuffer());
  if (!config)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "`" + path + "` is not valid JSON: " +
                         llvm::toString(config.takeError()));
  auto bindingJSON = parseJSON(bindingText);
  if (!bindingJSON)
    return invalid(llvm::toString(bindingJSON.takeError()));
  const json::Object *configObject = config->getAsObject();
  const json::Object *bindingObject = bindingJSON->getAsObject();
  if (!configObject)
    return makeError(ErrorId::CheckpointConfigMalformed,
                     "`" + path + "`: the top level is not an object");
  ConfigRules rules(bindingObject ? bindingObject->getObject("config")
                                  : nullptr,
                    bindingPath);
  ConfigReading reading = rules.read(*configObject);

  for (size_t i = 0; i < generics.size(); ++i) {
    const BoundGeneric &generic = generics[i];
    const ConfigValue *read = reading.find(generic.name);
    if (!read || i >= fromConfig.size() || !fromConfig[i])
      continue;
    if (generic.kind == GenericKind::Float) {
      if (!read->value)
        continue;
      auto text = read->value->getAsString();
      auto element = text ? elementFromConfig(*text) : std::nullopt;
      if (element != generic.element)
        return makeError(
            ErrorId::CheckpointConfigMismatch,
            "`" + path + "` binds `" + generic.name + "` to " +
                (text ? text->str() : std::string("a non-string")) +
                " (field `" + read->field +
                "`), but this binary was built for " +
                elementTypeName(generic.element));
      continue;
    }
    if (read->rule->form != ConfigRule::Form::Expression)
      continue;
    const std::string &text = read->rule->expression;
    if (!read->size || !read->size->isInteger()) {
      bool noField = !read->size &&
                     (read->failure == FieldExpression::Failure::MissingField ||
                      read->failure == FieldExpression::Failure::NotInteger);
      return makeError(ErrorId::CheckpointConfigMismatch,
                       "`" + path + "` does not give `" + generic.name +
                           "` (`" + text + "`" +
                           (noField
                                ? "; no integer field `" + read->problem + "`"
                                : std::string()) +
                           "); this binary was built for " + generic.name +
                           " = " + std::to_string(generic.size));
    }
    if (read->size->numerator() != generic.size)
      return makeError(ErrorId::CheckpointConfigMismatch,
                       "`" + path + "` binds `" + generic.name + "` to " +
                           std::to_string(read->size->numerator()) + " (`" +
                           text + "`), but this binary was built for " +
                           std::to_string(generic.size));
  }

  // The numbers the model's source fixes (rope theta, norm epsilons);
  // malformed rules were refused when the binary was built.
  for (const ConfigConstant &constant : reading.constants) {
    if (!constant.value) {
      std::string written;
      llvm::raw_string_ostream(written) << json::Value(constant.expected);
      warning("`" + path + "` has no `" + reading.sectionPrefix +
              constant.field + "`; using " + written + ", the value `" + model +
              "` is written for");
      continue;
    }
    if (constant.agrees)
      continue;
    std::string shown, written;
    llvm::raw_string_ostream(shown) << *constant.value;
    llvm::raw_string_ostream(written) << json::Value(constant.expected);
    return makeError(ErrorId::CheckpointConfigMismatch,
                     "`" + path + "`: field `" + constant.field + "` is " +
                         shown + ", but `" + model + "` is written for " +
                         written + "; another value needs a changed model");
  }
  return llvm::Error::success();
}

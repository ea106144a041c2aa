//===- ConfigConstants.cpp - Numbers a model's source fixes ---------------===//
//
// Reads a checkpoint binding's `constants` rules against a config section.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/ConfigConstants.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>

using namespace linnet;
namespace json = llvm::json;

std::vector<ConfigConstant>
linnet::readConfigConstants(const json::Object &constants,
                            const json::Object &section,
                            std::vector<std::string> &malformed) {
  // In name order, so that reports come in a stable order.
  std::vector<std::string> names;
  for (const auto &entry : constants)
    names.push_back(entry.first.str());
  std::sort(names.begin(), names.end());
  std::vector<ConfigConstant> found;
  for (const std::string &name : names) {
    const json::Object *rule = constants.get(name)->getAsObject();
    std::optional<double> expected =
        rule ? rule->getNumber("value") : std::nullopt;
    const json::Array *fields = rule ? rule->getArray("fields") : nullptr;
    if (!expected || !fields) {
      malformed.push_back(name);
      continue;
    }
    ConfigConstant absent;
    absent.name = name;
    absent.expected = *expected;
    absent.used = rule->getString("used").value_or("").str();
    absent.agrees = true;
    if (!fields->empty() && (*fields)[0].getAsString())
      absent.field = (*fields)[0].getAsString()->str();
    bool present = false;
    for (const json::Value &fieldValue : *fields) {
      auto field = fieldValue.getAsString();
      if (!field)
        continue;
      // `rope_parameters.rope_theta`: a path through nested objects.
      const json::Value *value = nullptr;
      const json::Object *object = &section;
      llvm::SmallVector<llvm::StringRef> parts;
      field->split(parts, '.');
      for (size_t i = 0; i < parts.size() && object; ++i) {
        value = object->get(parts[i]);
        object = value ? value->getAsObject() : nullptr;
      }
      if (!value || parts.empty())
        continue;
      ConfigConstant constant;
      constant.name = name;
      constant.field = field->str();
      constant.value = value;
      constant.expected = *expected;
      constant.used = rule->getString("used").value_or("").str();
      std::optional<double> actual = value->getAsNumber();
      constant.agrees = actual && std::fabs(*actual - *expected) <=
                                      1e-9 * std::fabs(*expected);
      found.push_back(std::move(constant));
      present = true;
      break;
    }
    if (!present)
      found.push_back(std::move(absent));
  }
  return found;
}

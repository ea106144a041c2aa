//===- ConfigRules.cpp - How a config.json gives a model's generics -------===//
//
// Reads a checkpoint binding's `config` object leniently (its users report
// a malformed rule where it matters, in their own words), reads config.json
// files by it, and inverts its integer rules for init-checkpoint.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/ConfigRules.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace linnet;
namespace json = llvm::json;

namespace {

/// The `constants` rules read against a config section, in name order.
std::vector<ConfigConstant> readConstants(const json::Object &constants,
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

} // namespace

ConfigRules::ConfigRules(const json::Object *config, llvm::StringRef path)
    : file(path.str()) {
  if (!config)
    return;
  if (auto name = config->getString("section"))
    sectionName = name->str();
  if (const json::Object *values = config->getObject("defaults"))
    for (const auto &[key, value] : *values) {
      if (auto integer = jsonInteger(value))
        defaults.push_back(key.str() + "=" + std::to_string(*integer));
      else if (auto text = value.getAsString())
        defaults.push_back(key.str() + "=" + text->str());
      else // neither: refused when bound, as an empty value
        defaults.push_back(key.str() + "=");
    }
  if (const json::Value *layout = config->get("template"))
    templateValue = *layout;
  if (const json::Value *constants = config->get("constants"))
    constantRules = *constants;
  const json::Object *generics = config->getObject("generics");
  genericsPresent = generics != nullptr;
  if (!generics)
    return;
  for (const auto &[key, value] : *generics) {
    ConfigRule rule;
    rule.generic = key.str();
    if (auto text = value.getAsString()) {
      rule.form = ConfigRule::Form::Expression;
      rule.expression = text->str();
      rule.fields.push_back(text->str());
    } else if (const json::Array *list = value.getAsArray()) {
      rule.form = ConfigRule::Form::Fields;
      for (const json::Value &entry : *list) {
        auto name = entry.getAsString();
        if (!name) {
          rule.form = ConfigRule::Form::Malformed;
          break;
        }
        rule.fields.push_back(name->str());
      }
    }
    ruleList.push_back(std::move(rule));
  }
  // In name order, as the rules of a JSON object have no other.
  llvm::sort(ruleList, [](const ConfigRule &a, const ConfigRule &b) {
    return a.generic < b.generic;
  });
}

const ConfigRule *ConfigRules::find(llvm::StringRef generic) const {
  for (const ConfigRule &rule : ruleList)
    if (rule.generic == generic)
      return &rule;
  return nullptr;
}

const ConfigValue *ConfigReading::find(llvm::StringRef generic) const {
  for (const ConfigValue &value : values)
    if (value.rule->generic == generic)
      return &value;
  return nullptr;
}

const json::Object &ConfigRules::sectionOf(const json::Object &config) const {
  if (!sectionName.empty())
    if (const json::Object *nested = config.getObject(sectionName))
      return *nested;
  return config;
}

json::Object &ConfigRules::sectionToWrite(json::Object &config) const {
  if (sectionName.empty())
    return config;
  if (!config.getObject(sectionName))
    config[sectionName] = json::Object();
  return *config.getObject(sectionName);
}

ConfigReading ConfigRules::read(const json::Object &config) const {
  ConfigReading reading;
  reading.section = &sectionOf(config);
  if (reading.section != &config)
    reading.sectionPrefix = sectionName + ".";
  const json::Object &section = *reading.section;
  for (const ConfigRule &rule : ruleList) {
    ConfigValue value;
    value.rule = &rule;
    if (rule.form == ConfigRule::Form::Expression) {
      FieldExpression expression;
      value.size = expression.evaluate(
          rule.expression,
          [&](llvm::StringRef name,
              FieldExpression::Failure &failure) -> std::optional<int64_t> {
            const json::Value *field = section.get(name);
            if (!field)
              return std::nullopt;
            failure = FieldExpression::Failure::NotInteger;
            return jsonInteger(*field);
          });
      value.failure = expression.failure;
      value.problem = expression.problem;
      value.fieldsRead = expression.fieldsRead;
    }
    // A dtype may be at the top level of a multimodal config.
    if (rule.form != ConfigRule::Form::Malformed)
      for (const std::string &field : rule.fields) {
        bool inSection = section.get(field) != nullptr;
        const json::Value *found =
            inSection ? section.get(field) : config.get(field);
        if (!found)
          continue;
        value.value = found;
        value.field = field;
        value.inSection = inSection && reading.section != &config;
        break;
      }
    reading.values.push_back(std::move(value));
  }
  if (const json::Object *constants = constantRules.getAsObject())
    reading.constants =
        readConstants(*constants, section, reading.malformedConstants);
  return reading;
}

llvm::Expected<std::map<std::string, int64_t>>
ConfigRules::fieldsFor(const std::map<std::string, int64_t> &generics) const {
  std::map<std::string, int64_t> fields;
  std::vector<std::pair<std::string, std::string>> pending;
  for (const ConfigRule &r : ruleList) {
    const std::string &generic = r.generic, &rule = r.expression;
    if (r.form != ConfigRule::Form::Expression || !generics.count(generic))
      continue;
    llvm::StringRef text = llvm::StringRef(rule).trim();
    bool plainField = !text.empty() && llvm::all_of(text, [](char c) {
      return llvm::isAlnum(c) || c == '_';
    }) && !llvm::isDigit(text.front());
    if (plainField)
      fields[text.str()] = generics.at(generic);
    else
      pending.emplace_back(generic, rule);
  }
  // Each pass settles the expressions with at most one unknown field.
  while (!pending.empty()) {
    bool progress = false;
    std::string stuck;
    for (auto it = pending.begin(); it != pending.end();) {
      const auto &[generic, rule] = *it;
      int64_t want = generics.at(generic);
      std::vector<std::string> missing;
      auto value = evaluateRational(rule, fields, &missing);
      if (value) {
        if (*value != Rational(want)) {
          std::string with;
          std::set<std::string> shown;
          llvm::SmallVector<llvm::StringRef> words;
          llvm::SplitString(rule, words, " +-*/()");
          for (llvm::StringRef word : words)
            if (auto field = fields.find(word.str());
                field != fields.end() && shown.insert(field->first).second)
              with += (with.empty() ? "" : ", ") + field->first + " = " +
                      std::to_string(field->second);
          return makeError(
              ErrorId::CheckpointConfigUnwritable,
              "`" + generic + "` is bound to " + std::to_string(want) +
                  ", but `" + rule + "` is " + value->str() + " with " + with +
                  "; a checkpoint cannot hold both (checkpoint binding `" +
                  file + "`)");
        }
        it = pending.erase(it);
        progress = true;
        continue;
      }
      llvm::consumeError(value.takeError());
      std::set<std::string> unknown(missing.begin(), missing.end());
      if (unknown.size() != 1) {
        stuck = generic;
        ++it;
        continue;
      }
      // Linear in the unknown x: f(x) = a x + b, so x = (want - b) / a.
      std::string name = *unknown.begin();
      Rational samples[3];
      bool ok = true;
      for (int x = 0; x < 3; ++x) {
        std::map<std::string, int64_t> trial = fields;
        trial[name] = x + 1;
        auto sample = evaluateRational(rule, trial, nullptr);
        if (!sample) {
          llvm::consumeError(sample.takeError());
          ok = false;
          break;
        }
        samples[x] = *sample;
      }
      // Any step may overflow 64 bits (negating the smallest integer too).
      auto subtract = [](const Rational &a,
                         const Rational &b) -> std::optional<Rational> {
        auto negated = b.negate();
        return negated ? a.add(*negated) : std::nullopt;
      };
      std::optional<Rational> slope, slope2, offset, solution;
      if (ok) {
        slope = subtract(samples[1], samples[0]);
        slope2 = subtract(samples[2], samples[1]);
        ok = slope && slope2 && *slope == *slope2 && !slope->isZero();
      }
      if (ok) {
        offset = subtract(samples[0], *slope); // f(0)
        auto rest = offset ? subtract(Rational(want), *offset) : std::nullopt;
        solution = rest ? rest->divide(*slope) : std::nullopt;
      }
      if (!ok || !solution || !solution->isInteger() ||
          solution->numerator() <= 0)
        return makeError(ErrorId::CheckpointConfigUnwritable,
                         "`" + generic + "` = " + std::to_string(want) +
                             " gives no positive integer `" + name +
                             "` through `" + rule + "` (checkpoint binding `" +
                             file + "`)");
      fields[name] = solution->numerator();
      it = pending.erase(it);
      progress = true;
    }
    if (!progress)
      return makeError(ErrorId::CheckpointConfigUnwritable,
                       "cannot derive the config fields of `" + stuck +
                           "` from the generics (checkpoint binding `" + file +
                           "`)");
  }
  return fields;
}

//===- ConfigRules.h - How a config.json gives a model's generics -*- C++
//-*-===//
//
// A checkpoint binding's `config` object says how a Hugging Face
// config.json binds the root block: the section the sizes live in
// (`text_config`), each generic's rule (an integer expression over fields,
// or for a Float generic the fields its dtype may be in), the generics a
// checkpoint does not hold (`defaults`), the config a written checkpoint
// starts from (`template`), and the numbers the model's source fixes
// (`constants`). This is the one reader of those rules: Sema's binding
// (a model bound from a config), a built binary's manifest (a checkpoint
// checked against the generics it was built for) and init-checkpoint (the
// config it writes) each turn what it reads into their own messages.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_MODEL_CONFIGRULES_H
#define LINNET_MODEL_CONFIGRULES_H

#include "linnet/Model/FieldExpression.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

/// A number the model's source writes as a literal (`config.constants`),
/// as one config.json gives it.
struct ConfigConstant {
  std::string name;  ///< the rule's name: `rope_theta`
  std::string field; ///< the field found, as the rule writes it
  /// The config's value; null when the config has none of the fields
  /// (`field` is then the first of them).
  const llvm::json::Value *value = nullptr;
  double expected = 0;
  std::string used; ///< where the model uses it, for messages
  /// The value is a number equal to `expected` (to 1e-9 relatively).
  bool agrees = false;
};

/// One generic's rule, as the binding writes it.
struct ConfigRule {
  enum class Form {
    Expression, ///< a string: an integer expression over section fields
    Fields,     ///< a list of field names, the first present wins (Float)
    Malformed,  ///< neither: reported where the rule is used
  };
  std::string generic;
  Form form = Form::Malformed;
  std::string expression;          ///< Form::Expression
  std::vector<std::string> fields; ///< Form::Fields (one for a lone string)
};

/// What one rule reads from one config.json.
struct ConfigValue {
  const ConfigRule *rule = nullptr;
  /// Form::Expression: the exact value, or nothing with `failure` and
  /// `problem` (for a field: its name) set; `fieldsRead` for messages.
  std::optional<Rational> size;
  FieldExpression::Failure failure = FieldExpression::Failure::BadExpression;
  std::string problem;
  std::vector<std::pair<std::string, int64_t>> fieldsRead;
  /// Form::Fields: the first field present (in the section, else at the top
  /// level) and its value; null when the config has none of them.
  const llvm::json::Value *value = nullptr;
  std::string field;
  bool inSection = false;
};

/// Everything a config.json gives by the rules. Points into the config.
struct ConfigReading {
  /// The section the sizes are read from (the top level when the config
  /// has no such section), and its name with a dot for messages
  /// (`text_config.`, or empty).
  const llvm::json::Object *section = nullptr;
  std::string sectionPrefix;
  std::vector<ConfigValue> values; ///< one per rule, in the rules' order
  std::vector<ConfigConstant> constants;
  std::vector<std::string> malformedConstants; ///< rules without fields/value

  /// The reading of `generic`'s rule (null when it has none).
  const ConfigValue *find(llvm::StringRef generic) const;
};

class ConfigRules {
public:
  ConfigRules() = default;
  /// The rules of `config` (a binding's `config` object; null gives no
  /// rules) in the binding file `path`. Nothing here fails: a rule of the
  /// wrong form is kept, for its user to report.
  ConfigRules(const llvm::json::Object *config, llvm::StringRef path);

  const std::string &path() const { return file; }
  /// Whether the binding has a `config.generics` object at all.
  bool hasGenerics() const { return genericsPresent; }
  llvm::ArrayRef<ConfigRule> rules() const { return ruleList; }
  const ConfigRule *find(llvm::StringRef generic) const;

  /// `config.section`: where a multimodal config nests the text sizes.
  const std::string &section() const { return sectionName; }
  /// The object the sizes are in: `config[section]` if present, else
  /// `config` itself (a text-only config).
  const llvm::json::Object &sectionOf(const llvm::json::Object &config) const;
  /// The object a written config holds the sizes in: `config[section]`,
  /// made when absent, or `config` when the binding names no section.
  llvm::json::Object &sectionToWrite(llvm::json::Object &config) const;

  /// Reads `config` by every rule.
  ConfigReading read(const llvm::json::Object &config) const;

  /// The config field values that give `generics` (Dim generics' values by
  /// name), inverting the integer rules: a rule naming one field sets it; an
  /// expression is solved for its one unknown field (it must be linear in
  /// it) or, with none unknown, checked against the generic's value.
  llvm::Expected<std::map<std::string, int64_t>>
  fieldsFor(const std::map<std::string, int64_t> &generics) const;

  /// `config.template`: the config.json a written checkpoint starts from
  /// (null when the binding has none, or it is not an object).
  const llvm::json::Object *templateObject() const {
    return templateValue.getAsObject();
  }
  /// Whether `config.template` is present but not an object.
  bool templateMalformed() const {
    return templateValue.kind() != llvm::json::Value::Null &&
           !templateValue.getAsObject();
  }
  /// `config.defaults`: generics a checkpoint does not hold, as
  /// `Name=Value`.
  const std::vector<std::string> &defaultBindings() const { return defaults; }

private:
  std::string file;
  bool genericsPresent = false;
  std::vector<ConfigRule> ruleList;
  std::string sectionName;
  llvm::json::Value templateValue = nullptr;
  llvm::json::Value constantRules = nullptr;
  std::vector<std::string> defaults;
};

} // namespace linnet

#endif // LINNET_MODEL_CONFIGRULES_H

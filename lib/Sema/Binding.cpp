//===- Binding.cpp - Config and overrides to sizes, checked ---------------===//
//
// Reads the model's checkpoint binding and a Hugging Face config.json with
// llvm::json, evaluates each generic's config expression exactly (a derived
// size such as `num_hidden_layers / 4` must divide evenly), applies
// `Name=Value` overrides, then walks the instantiated block tree once per
// distinct instance to check sizes and count parameters.
//
//===----------------------------------------------------------------------===//

#include "linnet/Sema/Binding.h"

#include "linnet/Basic/JSON.h"
#include "linnet/Model/ConfigRules.h"
#include "linnet/Model/FieldExpression.h"
#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/DeclPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <map>
#include <set>

using namespace linnet;
namespace json = llvm::json;

std::string linnet::formatParameterCount(uint64_t count) {
  static const std::pair<double, const char *> units[] = {
      {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto &[scale, suffix] : units)
    if (double(count) >= scale)
      return fmt::format("{:.1f}{}", double(count) / scale, suffix);
  return std::to_string(count);
}

const BlockDecl *linnet::findRootBlock(const Program &program,
                                       DiagnosticEngine &diags) {
  const BlockDecl *root = nullptr;
  for (const auto &block : program.blocks) {
    if (!block->hasEntries())
      continue;
    if (root) {
      diags.report(block->syntax->name.range, diag::SeveralRootBlocks,
                   root->qualifiedName(), block->qualifiedName());
      return nullptr;
    }
    root = block.get();
  }
  if (!root)
    diags.report(diag::NoRootBlock, 0);
  return root;
}

namespace {

/// Reads and parses a JSON file. A syntax error is reported at its place in
/// the file, which is added to the SourceMgr for that.
std::optional<json::Value> readJson(llvm::StringRef path,
                                    DiagnosticEngine &diags) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    diags.report(diag::UnreadableFile, path.str(),
                 llvm::StringRef(buffer.getError().message()).lower());
    return std::nullopt;
  }
  auto value = parseJSON((*buffer)->getBuffer());
  if (value)
    return std::move(*value);
  // llvm::json describes the error as `[line:column, byte=offset]: message`.
  std::string text = llvm::toString(value.takeError());
  llvm::StringRef rest(text);
  size_t offset = 0;
  bool located = false;
  if (rest.consume_front("[") && rest.contains("byte=")) {
    llvm::StringRef number = rest.split("byte=").second;
    auto [digits, after] = number.split(']');
    located = !digits.getAsInteger(10, offset) && after.consume_front(": ");
    if (located)
      rest = after;
  }
  std::string message = located ? rest.str() : text;
  if (!message.empty())
    message[0] = llvm::toLower(message[0]);
  llvm::SourceMgr &sourceMgr = diags.getSourceMgr();
  const char *start = (*buffer)->getBufferStart();
  size_t size = (*buffer)->getBufferSize();
  if (located && offset <= size) {
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    diags.report(llvm::SMLoc::getFromPointer(start + offset),
                 diag::MalformedJson, path.str(), message);
  } else {
    diags.report(diag::MalformedJson, path.str(), message);
  }
  return std::nullopt;
}

/// Binding state for one call of bindModel.
class ModelBinder {
public:
  ModelBinder(const BlockDecl &root, DiagnosticEngine &diags)
      : root(root), diags(diags) {}

  bool bindArgument(const std::string &arg);
  std::optional<BoundModel> finish();

private:
  bool bindConfig(llvm::StringRef path);
  bool bindValue(const GenericDecl &generic, llvm::StringRef value,
                 const std::string &origin);

  /// Instantiates `block` with `values` (generic name -> value), checking
  /// every size; returns its parameter count.
  std::optional<uint64_t>
  instantiate(const BlockDecl &block,
              const std::map<std::string, ShapeExpr> &sizes,
              llvm::SMRange instantiatedAt);
  std::optional<int64_t>
  evaluateSize(const ShapeExpr &size, llvm::SMRange loc,
               const std::map<std::string, ShapeExpr> &sizes,
               bool allowSymbols);

  const BlockDecl &root;
  DiagnosticEngine &diags;
  std::map<std::string, BoundGeneric> values;
  std::map<std::string, uint64_t> instanceCounts;
  /// Per instance key: how many block instances its subtree expands to
  /// (itself included, every array element counted), at most
  /// kMaxBlockInstances + 1.
  std::map<std::string, uint64_t> expandedCounts;

public:
  std::vector<BlockInstanceSizes> instances;

private:
  std::set<std::pair<const char *, std::string>> reported;
  bool countOverflowReported = false;
  bool tooManyInstancesReported = false;
  bool failed = false;
};

bool ModelBinder::bindValue(const GenericDecl &generic, llvm::StringRef value,
                            const std::string &origin) {
  BoundGeneric bound;
  bound.name = generic.name;
  bound.kind = generic.kind;
  bound.origin = origin;
  switch (generic.kind) {
  case GenericKind::Dim: {
    int64_t size;
    if (value.getAsInteger(10, size)) {
      diags.report(diag::BindingKind, generic.name, "Dim", value.str(),
                   "a size");
      return false;
    }
    if (size <= 0) {
      diags.report(diag::NonPositiveShape, generic.name, value.str(),
                   "from `" + origin + "`");
      return false;
    }
    bound.size = size;
    break;
  }
  case GenericKind::Float: {
    auto element = elementFromConfig(value);
    if (!element) {
      diags.report(diag::BindingKind, generic.name, "Float", value.str(),
                   "a float element type (`bf16`, `f16`, `f32`)");
      return false;
    }
    bound.element = *element;
    break;
  }
  case GenericKind::Shape:
    diags.report(diag::BindingKind, generic.name, "Shape", value.str(),
                 "bindable, since only `Dim` and `Float` generics take "
                 "values");
    return false;
  }
  values[generic.name] = bound;
  return true;
}

bool ModelBinder::bindConfig(llvm::StringRef configPath) {
  llvm::SmallString<256> bindingPath(
      llvm::sys::path::parent_path(root.module->path));
  llvm::sys::path::append(bindingPath, kCheckpointBindingFile);
  if (!llvm::sys::fs::exists(bindingPath)) {
    diags.report(diag::CheckpointBindingInvalid, std::string(bindingPath),
                 "the file is missing; `" + root.qualifiedName() +
                     "` cannot be bound from a config without it");
    return false;
  }
  auto binding = readJson(bindingPath, diags);
  auto config = readJson(configPath, diags);
  if (!binding || !config)
    return false;

  const json::Object *bindingObject = binding->getAsObject();
  ConfigRules rules(bindingObject ? bindingObject->getObject("config")
                                  : nullptr,
                    bindingPath);
  if (!rules.hasGenerics()) {
    diags.report(diag::CheckpointBindingInvalid, std::string(bindingPath),
                 "expected an object `config.generics`");
    return false;
  }
  const json::Object *configObject = config->getAsObject();
  if (!configObject) {
    diags.report(diag::ConfigField, configPath.str(),
                 "the top level is not an object");
    return false;
  }
  ConfigReading reading = rules.read(*configObject);
  const std::string &sectionName = reading.sectionPrefix;

  bool ok = true;
  for (const GenericDecl &generic : root.generics) {
    const ConfigValue *read = reading.find(generic.name);
    if (!read)
      continue;
    const ConfigRule &rule = *read->rule;
    if (generic.kind == GenericKind::Float) {
      // Absent: the generic's default or an override applies.
      if (!read->value)
        continue;
      std::string field = (read->inSection ? sectionName : "") + read->field;
      if (auto text = read->value->getAsString())
        ok &= bindValue(generic, *text, configPath.str() + ": " + field);
      else {
        diags.report(diag::ConfigField, configPath.str(),
                     "field `" + field + "` is not a string; `" + generic.name +
                         "` is bound from it");
        ok = false;
      }
      continue;
    }
    if (rule.form != ConfigRule::Form::Expression) {
      diags.report(diag::CheckpointBindingInvalid, std::string(bindingPath),
                   "the rule for `" + generic.name + "` is not a string");
      ok = false;
      continue;
    }
    const std::string &text = rule.expression;
    std::string ruleText =
        "`" + generic.name + "` is bound from `" + text + "`";
    if (!read->size) {
      switch (read->failure) {
      case FieldExpression::Failure::BadExpression:
        diags.report(diag::CheckpointBindingInvalid, std::string(bindingPath),
                     "the rule `" + text + "` for `" + generic.name +
                         "`: " + read->problem);
        break;
      case FieldExpression::Failure::MissingField:
        diags.report(diag::ConfigField, configPath.str(),
                     "no field `" + sectionName + read->problem + "`; " +
                         ruleText);
        break;
      case FieldExpression::Failure::NotInteger:
        diags.report(diag::ConfigField, configPath.str(),
                     "field `" + sectionName + read->problem +
                         "` is not an integer; " + ruleText);
        break;
      case FieldExpression::Failure::Overflow:
        diags.report(diag::ConfigField, configPath.str(),
                     read->problem + "; " + ruleText);
        break;
      }
      ok = false;
      continue;
    }
    if (!read->size->isInteger()) {
      std::string fieldsText;
      for (const auto &[field, fieldValue] : read->fieldsRead)
        fieldsText += (fieldsText.empty() ? "" : ", ") + field + " = " +
                      std::to_string(fieldValue);
      diags.report(diag::NonIntegralShape, generic.name + " = " + text,
                   read->size->str(),
                   "with " + fieldsText + " from `" + configPath.str() + "`");
      ok = false;
      continue;
    }
    ok &= bindValue(generic, std::to_string(read->size->numerator()),
                    configPath.str() + ": " + sectionName + text);
  }
  // Numbers the model's source fixes (rope theta, norm epsilons): a config
  // that says otherwise describes another model, which would run silently
  // wrong; an absent field means the usual value.
  for (const ConfigConstant &constant : reading.constants) {
    if (!constant.value) {
      diags.report(diag::ConfigConstantAbsent, configPath.str(),
                   sectionName + constant.field,
                   fmt::format("{}", constant.expected), root.qualifiedName());
      continue;
    }
    if (constant.agrees)
      continue;
    std::optional<double> actual = constant.value->getAsNumber();
    if (!actual)
      diags.report(diag::ConfigField, configPath.str(),
                   "field `" + sectionName + constant.field +
                       "` is not a number");
    else
      diags.report(diag::ConfigField, configPath.str(),
                   "field `" + sectionName + constant.field + "` is " +
                       fmt::format("{}", *actual) + ", but `" +
                       root.qualifiedName() + "` is written for " +
                       fmt::format("{}", constant.expected) +
                       (constant.used.empty() ? std::string()
                                              : " (" + constant.used + ")") +
                       "; another value needs a changed model");
    ok = false;
  }
  for (const std::string &name : reading.malformedConstants) {
    diags.report(diag::CheckpointBindingInvalid, std::string(bindingPath),
                 "the constant `" + name +
                     "` needs `fields` (a list) and `value` (a number)");
    ok = false;
  }
  // Sizes a checkpoint does not hold (the number of state slots, `Batch`).
  for (const GenericDecl &generic : root.generics)
    for (llvm::StringRef binding : rules.defaultBindings())
      if (binding.consume_front(generic.name) && binding.consume_front("=") &&
          !values.count(generic.name))
        ok &= bindValue(generic, binding,
                        std::string(bindingPath) + ": defaults");
  return ok;
}

bool ModelBinder::bindArgument(const std::string &arg) {
  llvm::StringRef text(arg);
  auto [name, value] = text.split('=');
  if (text.contains('=')) {
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty()) {
      diags.report(diag::BadBindingSyntax, arg);
      return false;
    }
    const GenericDecl *generic = root.findGeneric(name);
    if (!generic) {
      diags.report(diag::UnknownBinding, name.str(), root.qualifiedName());
      std::string list;
      for (const GenericDecl &g : root.generics)
        list += (list.empty() ? "`" : ", `") + g.name + "`";
      diags.report(root.syntax->name.range, diag::GenericsAre,
                   root.qualifiedName(), list);
      return false;
    }
    return bindValue(*generic, value, "--bind " + arg);
  }
  if (!llvm::sys::fs::exists(text)) {
    if (text.ends_with(".json"))
      diags.report(diag::UnreadableFile, arg, "no such file or directory");
    else
      diags.report(diag::BadBindingSyntax, arg);
    return false;
  }
  return bindConfig(text);
}

std::optional<int64_t>
ModelBinder::evaluateSize(const ShapeExpr &size, llvm::SMRange loc,
                          const std::map<std::string, ShapeExpr> &sizes,
                          bool allowSymbols) {
  auto value = size.substitute(sizes);
  std::string bound;
  for (const ShapeSymbol &symbol : size.symbols()) {
    auto it = sizes.find(symbol.name);
    if (it != sizes.end())
      bound +=
          (bound.empty() ? "" : ", ") + symbol.name + " = " + it->second.str();
  }
  auto report = [&](const auto &kind, const std::string &valueText) {
    std::string message = size.str() + valueText + bound;
    if (reported.insert({loc.Start.getPointer(), message}).second)
      diags.report(loc, kind, size.str(), valueText,
                   bound.empty() ? "with no generics" : "with " + bound);
    failed = true;
  };
  if (!value) {
    llvm::consumeError(value.takeError());
    if (reported.insert({loc.Start.getPointer(), size.str()}).second)
      diags.report(loc, diag::ShapeOverflow, size.str());
    failed = true;
    return std::nullopt;
  }
  std::optional<Rational> constant = value->constantValue();
  if (!constant)
    return allowSymbols ? std::optional<int64_t>(0) : std::nullopt;
  if (!constant->isInteger()) {
    report(diag::NonIntegralShape, constant->str());
    return std::nullopt;
  }
  if (constant->numerator() <= 0) {
    report(diag::NonPositiveShape, constant->str());
    return std::nullopt;
  }
  return constant->numerator();
}

/// What identifies a block instance: the block and its bound sizes.
static std::string instanceKey(const BlockDecl &block,
                               const std::map<std::string, ShapeExpr> &sizes) {
  std::string key = block.qualifiedName();
  for (const auto &[name, size] : sizes)
    key += "|" + name + "=" + size.str();
  return key;
}

std::optional<uint64_t>
ModelBinder::instantiate(const BlockDecl &block,
                         const std::map<std::string, ShapeExpr> &sizes,
                         llvm::SMRange instantiatedAt) {
  std::string key = instanceKey(block, sizes);
  if (auto it = instanceCounts.find(key); it != instanceCounts.end())
    return it->second;
  instances.push_back({&block, sizes});

  unsigned errorsBefore = diags.errorCount();
  // A count past 2^64 is reported once, where it first overflows.
  auto countOverflow = [&](llvm::SMRange loc) {
    if (!countOverflowReported)
      diags.report(loc, diag::ParameterCountOverflow, block.name);
    countOverflowReported = true;
    failed = true;
  };
  auto checkType = [&](const TypeRef &type, bool allowSymbols,
                       uint64_t *elements) {
    if (type.kind != TypeRef::Tensor)
      return;
    uint64_t count = 1;
    for (const DimEntry &dim : type.dims) {
      if (!dim.size)
        continue;
      auto value = evaluateSize(*dim.size, dim.loc, sizes, allowSymbols);
      if (value && elements &&
          __builtin_mul_overflow(count, uint64_t(*value), &count))
        countOverflow(type.loc);
    }
    if (elements)
      *elements = count;
  };

  uint64_t total = 0;
  uint64_t expanded = 1;
  for (const MemberDecl &member : block.members) {
    if (auto *param = std::get_if<ParamDecl>(&member)) {
      uint64_t elements = 0;
      checkType(param->type, false, &elements);
      // An optional parameter is absent from checkpoints unless a model
      // says otherwise; it does not count.
      if (!param->optional && __builtin_add_overflow(total, elements, &total))
        countOverflow(param->loc);
    } else if (auto *state = std::get_if<StateDecl>(&member)) {
      checkType(state->type, false, nullptr);
    } else if (auto *fn = std::get_if<FnDecl>(&member)) {
      // Signatures may keep the function's own generics symbolic.
      for (const FnParamDecl &param : fn->params)
        checkType(param.type, true, nullptr);
      if (fn->result)
        checkType(*fn->result, true, nullptr);
    } else {
      const auto &sub = std::get<SubDecl>(member);
      std::map<std::string, ShapeExpr> subSizes;
      bool ok = true;
      for (size_t i = 0; i < sub.args.size(); ++i) {
        const GenericArg &arg = sub.args[i];
        if (arg.kind != GenericKind::Dim || !arg.size)
          continue;
        auto value =
            evaluateSize(*arg.size, arg.loc.Start.isValid() ? arg.loc : sub.loc,
                         sizes, false);
        if (!value) {
          ok = false;
          continue;
        }
        subSizes[sub.block->generics[i].name] = ShapeExpr::constant(*value);
      }
      uint64_t copies = 1;
      if (sub.count) {
        auto value = evaluateSize(*sub.count, sub.loc, sizes, false);
        ok &= value.has_value();
        copies = value.value_or(0);
      }
      if (!ok)
        continue;
      auto count = instantiate(*sub.block, subSizes, sub.loc);
      // Every array element is generated and loaded on its own, so an
      // absurd count must stop here, not in code generation.
      uint64_t subExpanded = expandedCounts[instanceKey(*sub.block, subSizes)];
      uint64_t added;
      if (__builtin_mul_overflow(copies, subExpanded, &added) ||
          __builtin_add_overflow(expanded, added, &expanded) ||
          expanded > kMaxBlockInstances) {
        if (!tooManyInstancesReported)
          diags.report(sub.loc, diag::TooManyInstances, sub.name, copies,
                       sub.block->name, kMaxBlockInstances);
        tooManyInstancesReported = true;
        failed = true;
        expanded = kMaxBlockInstances + 1;
      }
      uint64_t product;
      if (!count)
        failed = true;
      else if (__builtin_mul_overflow(*count, copies, &product) ||
               __builtin_add_overflow(total, product, &total))
        countOverflow(sub.loc);
    }
  }
  if (diags.errorCount() != errorsBefore && instantiatedAt.Start.isValid())
    diags.report(instantiatedAt, diag::InstantiatedHere, block.name);
  instanceCounts[key] = total;
  expandedCounts[key] = expanded;
  return total;
}

std::optional<BoundModel> ModelBinder::finish() {
  BoundModel model;
  model.root = &root;
  std::map<std::string, ShapeExpr> sizes;
  bool ok = !failed;
  for (const GenericDecl &generic : root.generics) {
    auto it = values.find(generic.name);
    if (it == values.end()) {
      BoundGeneric fromDefault;
      fromDefault.name = generic.name;
      fromDefault.kind = generic.kind;
      fromDefault.origin = "default";
      if (generic.defaultElement) {
        fromDefault.element = *generic.defaultElement;
        it = values.emplace(generic.name, fromDefault).first;
      } else if (generic.defaultSize) {
        auto value =
            evaluateSize(*generic.defaultSize, generic.loc, sizes, false);
        if (!value) {
          ok = false;
          continue;
        }
        fromDefault.size = *value;
        it = values.emplace(generic.name, fromDefault).first;
      } else {
        diags.report(generic.loc, diag::MissingBinding, generic.name,
                     root.qualifiedName());
        ok = false;
        continue;
      }
    }
    model.generics.push_back(it->second);
    if (generic.kind == GenericKind::Dim)
      sizes[generic.name] = ShapeExpr::constant(it->second.size);
  }
  if (!ok)
    return std::nullopt;
  auto count = instantiate(root, sizes, {});
  if (!count || failed)
    return std::nullopt;
  model.parameterCount = *count;
  model.instances = std::move(instances);
  return model;
}

} // namespace

std::optional<BoundModel>
linnet::bindModel(const Program &program, llvm::ArrayRef<std::string> bindArgs,
                  DiagnosticEngine &diags) {
  const BlockDecl *root = findRootBlock(program, diags);
  if (!root)
    return std::nullopt;
  ModelBinder binder(*root, diags);
  bool ok = true;
  for (const std::string &arg : bindArgs)
    ok &= binder.bindArgument(arg);
  if (!ok)
    return std::nullopt;
  return binder.finish();
}

void linnet::printBoundModel(const BoundModel &model, llvm::raw_ostream &os) {
  os << "\ngenerics of " << model.root->qualifiedName() << "\n";
  for (const BoundGeneric &generic : model.generics)
    os << "  " << generic.name << " " << generic.valueText() << "\n";
  os << "\nentries\n";
  for (const MemberDecl &member : model.root->members)
    if (auto *fn = std::get_if<FnDecl>(&member); fn && fn->isEntry)
      os << "  " << formatSignature(*fn) << "\n";
  os << "\nparameters " << formatParameterCount(model.parameterCount) << " ("
     << model.parameterCount << ")\n";
}

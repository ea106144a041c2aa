//===- FieldExpression.cpp - Integer expressions over named fields --------===//
//
// Recursive descent over `+ - * /`, parentheses, integers and names.
//
//===----------------------------------------------------------------------===//

#include "linnet/Model/FieldExpression.h"

#include "llvm/ADT/StringExtras.h"

using namespace linnet;

std::optional<Rational> FieldExpression::evaluate(llvm::StringRef text,
                                                  Lookup lookup) {
  this->text = text;
  this->lookup = lookup;
  pos = 0;
  fieldsRead.clear();
  auto value = sum();
  if (!value)
    return std::nullopt;
  skipSpaces();
  if (pos != text.size())
    return fail(Failure::BadExpression,
                "unexpected `" + text.substr(pos, 1).str() + "`");
  return value;
}

std::optional<Rational> FieldExpression::fail(Failure kind,
                                              const std::string &message) {
  failure = kind;
  problem = message;
  return std::nullopt;
}

void FieldExpression::skipSpaces() {
  while (pos < text.size() && text[pos] == ' ')
    ++pos;
}

std::optional<Rational>
FieldExpression::arithmetic(std::optional<Rational> result, bool division) {
  if (result)
    return result;
  return division ? fail(Failure::BadExpression, "division by zero")
                  : fail(Failure::Overflow, "the value overflows 64 bits");
}

std::optional<Rational> FieldExpression::sum() {
  auto value = product();
  while (value) {
    skipSpaces();
    if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-'))
      break;
    char op = text[pos++];
    auto rhs = product();
    if (!rhs)
      return std::nullopt;
    auto operand = op == '-' ? rhs->negate() : rhs;
    value = operand ? arithmetic(value->add(*operand), false)
                    : arithmetic(std::nullopt, false);
  }
  return value;
}

std::optional<Rational> FieldExpression::product() {
  auto value = factor();
  while (value) {
    skipSpaces();
    if (pos >= text.size() || (text[pos] != '*' && text[pos] != '/'))
      break;
    char op = text[pos++];
    auto rhs = factor();
    if (!rhs)
      return std::nullopt;
    value = op == '*' ? arithmetic(value->multiply(*rhs), false)
                      : arithmetic(value->divide(*rhs), rhs->isZero());
  }
  return value;
}

std::optional<Rational> FieldExpression::factor() {
  skipSpaces();
  if (pos < text.size() && text[pos] == '(') {
    ++pos;
    auto value = sum();
    skipSpaces();
    if (value && (pos >= text.size() || text[pos++] != ')'))
      return fail(Failure::BadExpression, "expected `)`");
    return value;
  }
  size_t start = pos;
  while (pos < text.size() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
    ++pos;
  llvm::StringRef word = text.slice(start, pos);
  if (word.empty())
    return fail(Failure::BadExpression, "expected a field name or a number");
  int64_t number;
  if (!word.getAsInteger(10, number))
    return Rational(number);
  Failure kind = Failure::MissingField;
  std::optional<int64_t> value = lookup(word, kind);
  if (!value)
    return fail(kind, word.str());
  fieldsRead.emplace_back(word.str(), *value);
  return Rational(*value);
}

llvm::Expected<Rational>
linnet::evaluateRational(llvm::StringRef text,
                         const std::map<std::string, int64_t> &fields,
                         std::vector<std::string> *missing) {
  // Every missing name is collected, not only the first.
  std::vector<std::string> absent;
  FieldExpression expression;
  auto value = expression.evaluate(
      text,
      [&](llvm::StringRef name,
          FieldExpression::Failure &) -> std::optional<int64_t> {
        auto it = fields.find(name.str());
        if (it != fields.end())
          return it->second;
        absent.push_back(name.str());
        return 1;
      });
  if (!value)
    return llvm::createStringError("`" + text + "`: " + expression.problem);
  if (!absent.empty()) {
    if (missing)
      *missing = absent;
    return llvm::createStringError("`" + text + "`: no value for `" +
                                   absent.front() + "`");
  }
  return *value;
}

llvm::Expected<int64_t>
linnet::evaluateIntegerExpression(llvm::StringRef text,
                                  const std::map<std::string, int64_t> &fields,
                                  std::vector<std::string> *missing) {
  auto value = evaluateRational(text, fields, missing);
  if (!value)
    return value.takeError();
  if (!value->isInteger())
    return llvm::createStringError("`" + text + "` is " + value->str() +
                                   ", not an integer");
  return value->numerator();
}

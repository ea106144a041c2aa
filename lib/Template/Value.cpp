//===- Value.cpp - Python's printing, equality and JSON for template values
//===//
//
// A rendered prompt must be the same bytes as Python renders, so `str`,
// `repr`, float formatting and json.dumps are spelled out as CPython does
// them; utf8proc supplies the Unicode categories `repr` escapes by.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/Value.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Template/Unicode.h"

#include "llvm/ADT/StringExtras.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>

using namespace linnet;
using namespace linnet::tmpl;

const Value *Dict::find(llvm::StringRef key) const {
  for (const auto &[name, value] : entries)
    if (name == key)
      return &value;
  return nullptr;
}

void Dict::set(llvm::StringRef key, Value value) {
  for (auto &[name, slot] : entries)
    if (name == key) {
      slot = std::move(value);
      return;
    }
  entries.emplace_back(key.str(), std::move(value));
}

bool Value::truthy() const {
  switch (kind) {
  case Kind::Undefined:
  case Kind::None:
    return false;
  case Kind::Bool:
  case Kind::Int:
    return integer != 0;
  case Kind::Float:
    return real != 0;
  case Kind::String:
    return !text.empty();
  case Kind::List:
    return isIterator() || !items->empty();
  case Kind::Dict:
    return !map->entries.empty();
  case Kind::Namespace:
  case Kind::Callable:
    return true;
  }
  return false;
}

std::string Value::typeWithArticle() const {
  llvm::StringRef name = typeName();
  bool vowel = !name.empty() && llvm::StringRef("aeiouAEIOU").contains(name[0]);
  return (vowel ? "an " : "a ") + name.str();
}

llvm::StringRef Value::typeName() const {
  switch (kind) {
  case Kind::Undefined:
    return "Undefined";
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::String:
    return "str";
  case Kind::List:
    return !pythonType.empty() ? llvm::StringRef(pythonType)
           : tuple             ? "tuple"
                               : "list";
  case Kind::Dict:
    return "dict";
  case Kind::Namespace:
    return "Namespace";
  case Kind::Callable:
    return "function";
  }
  return "";
}

std::string tmpl::formatPythonFloat(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  // The shortest digits that read back, then CPython's choice of notation:
  // positional for exponents in [-4, 16), else `d.ddde+XX`.
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof buffer, d,
                              std::chars_format::scientific);
  std::string scientific(buffer, result.ptr);
  size_t e = scientific.find('e');
  std::string mantissa = scientific.substr(0, e);
  int exponent = std::stoi(scientific.substr(e + 1));
  bool negative = mantissa[0] == '-';
  if (negative)
    mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.')
      digits += c;
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    } else if (size_t(exponent) + 1 >= digits.size()) {
      out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1)
    out += "." + digits.substr(1);
  char exponentText[16];
  std::snprintf(exponentText, sizeof exponentText, "e%c%02d",
                exponent < 0 ? '-' : '+', std::abs(exponent));
  return out + exponentText;
}

namespace {

/// CPython's repr of a str: single quotes unless the text has one and no
/// double quote; escapes for the backslash, the quote, \n \r \t and every
/// character str.isprintable() refuses.
std::string reprString(llvm::StringRef text) {
  bool single = text.contains('\'') && !text.contains('"');
  char quote = single ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    int32_t c = decodeCodePoint(text, i);
    if (c == '\\' || c == quote) {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0 || !isPythonPrintable(c)) {
      char escape[16];
      unsigned u = c < 0 ? 0xDC00u + uint8_t(text[start]) : unsigned(c);
      if (u < 0x100)
        std::snprintf(escape, sizeof escape, "\\x%02x", u);
      else if (u < 0x10000)
        std::snprintf(escape, sizeof escape, "\\u%04x", u);
      else
        std::snprintf(escape, sizeof escape, "\\U%08x", u);
      out += escape;
    } else {
      out.append(text.data() + start, i - start);
    }
  }
  out += quote;
  return out;
}

std::string reprOf(const Value &value, bool top);

std::string reprItems(const Value &value) {
  std::string out;
  if (value.isIterator())
    return "<" + value.pythonType + " object>";
  if (!value.pythonType.empty()) {
    Value plain = value;
    plain.pythonType.clear();
    return value.pythonType + "(" + reprItems(plain) + ")";
  }
  if (value.is(Value::Kind::List)) {
    out += value.tuple ? "(" : "[";
    for (size_t i = 0; i < value.items->size(); ++i) {
      if (i)
        out += ", ";
      out += reprOf((*value.items)[i], false);
    }
    if (value.tuple && value.items->size() == 1)
      out += ",";
    out += value.tuple ? ")" : "]";
    return out;
  }
  out += "{";
  bool first = true;
  for (const auto &[key, item] : value.map->entries) {
    if (!first)
      out += ", ";
    first = false;
    out += reprString(key) + ": " + reprOf(item, false);
  }
  return out + "}";
}

std::string reprOf(const Value &value, bool top) {
  switch (value.kind) {
  case Value::Kind::Undefined:
    return top ? "" : "Undefined";
  case Value::Kind::None:
    return "None";
  case Value::Kind::Bool:
    return value.integer ? "True" : "False";
  case Value::Kind::Int:
    return std::to_string(value.integer);
  case Value::Kind::Float:
    return formatPythonFloat(value.real);
  case Value::Kind::String:
    return top ? value.text : reprString(value.text);
  case Value::Kind::List:
  case Value::Kind::Dict:
    return reprItems(value);
  case Value::Kind::Namespace:
    return "<Namespace " + reprItems(Value::dict(*value.map)) + ">";
  case Value::Kind::Callable:
    return "<function " + value.text + ">";
  }
  return "";
}

} // namespace

std::string Value::str() const { return reprOf(*this, /*top=*/true); }

std::string Value::repr() const {
  return kind == Kind::String ? reprString(text) : reprOf(*this, false);
}

bool tmpl::equals(const Value &a, const Value &b) {
  using Kind = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.is(Kind::Float) || b.is(Kind::Float))
      return a.asDouble() == b.asDouble();
    return a.integer == b.integer;
  }
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Kind::Undefined:
  case Kind::None:
    return true;
  case Kind::String:
    return a.text == b.text;
  case Kind::List:
    if (a.isIterator() || b.isIterator())
      return a.items == b.items;
    if (a.tuple != b.tuple || a.pythonType != b.pythonType ||
        a.items->size() != b.items->size())
      return false;
    for (size_t i = 0; i < a.items->size(); ++i)
      if (!equals((*a.items)[i], (*b.items)[i]))
        return false;
    return true;
  case Kind::Dict: {
    if (a.map->entries.size() != b.map->entries.size())
      return false;
    for (const auto &[key, item] : a.map->entries) {
      const Value *other = b.map->find(key);
      if (!other || !equals(item, *other))
        return false;
    }
    return true;
  }
  case Kind::Namespace:
    return a.map == b.map;
  case Kind::Callable:
    return a.function == b.function;
  default:
    return false;
  }
}

namespace {

/// json.dumps(ensure_ascii=False)'s escaping of a string.
void writeJSONString(llvm::StringRef text, std::string &out) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (uint8_t(c) < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof escape, "\\u%04x", unsigned(c));
        out += escape;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

llvm::Error writeJSON(const Value &value, const JSONStyle &style,
                      unsigned level, std::string &out) {
  auto newline = [&](unsigned depth) {
    if (!style.indent)
      return;
    out += '\n';
    for (unsigned i = 0; i < depth; ++i)
      out += *style.indent;
  };
  switch (value.kind) {
  case Value::Kind::None:
    out += "null";
    return llvm::Error::success();
  case Value::Kind::Bool:
    out += value.integer ? "true" : "false";
    return llvm::Error::success();
  case Value::Kind::Int:
    out += std::to_string(value.integer);
    return llvm::Error::success();
  case Value::Kind::Float:
    if (std::isnan(value.real))
      out += "NaN";
    else if (std::isinf(value.real))
      out += value.real < 0 ? "-Infinity" : "Infinity";
    else
      out += formatPythonFloat(value.real);
    return llvm::Error::success();
  case Value::Kind::String:
    writeJSONString(value.text, out);
    return llvm::Error::success();
  case Value::Kind::List: {
    if (!value.pythonType.empty())
      return llvm::createStringError("Object of type " + value.pythonType +
                                     " is not JSON serializable");
    if (value.items->empty()) {
      out += "[]";
      return llvm::Error::success();
    }
    out += '[';
    for (size_t i = 0; i < value.items->size(); ++i) {
      if (i)
        out += style.itemSeparator;
      newline(level + 1);
      if (auto error = writeJSON((*value.items)[i], style, level + 1, out))
        return error;
    }
    newline(level);
    out += ']';
    return llvm::Error::success();
  }
  case Value::Kind::Dict: {
    if (value.map->entries.empty()) {
      out += "{}";
      return llvm::Error::success();
    }
    std::vector<const std::pair<std::string, Value> *> entries;
    for (const auto &entry : value.map->entries)
      entries.push_back(&entry);
    if (style.sortKeys)
      std::sort(entries.begin(), entries.end(), // keys are distinct
                [](auto *a, auto *b) { return a->first < b->first; });
    out += '{';
    for (size_t i = 0; i < entries.size(); ++i) {
      if (i)
        out += style.itemSeparator;
      newline(level + 1);
      writeJSONString(entries[i]->first, out);
      out += style.keySeparator;
      if (auto error = writeJSON(entries[i]->second, style, level + 1, out))
        return error;
    }
    newline(level);
    out += '}';
    return llvm::Error::success();
  }
  default:
    return llvm::createStringError("Object of type " + value.typeName().str() +
                                   " is not JSON serializable");
  }
}

using OrderedJSON = nlohmann::ordered_json;

llvm::Expected<Value> fromJSON(const OrderedJSON &json, unsigned depth) {
  if (depth > kMaxJSONDepth)
    return llvm::createStringError("nested deeper than " +
                                   std::to_string(kMaxJSONDepth) + " levels");
  switch (json.type()) {
  case OrderedJSON::value_t::null:
    return Value::none();
  case OrderedJSON::value_t::boolean:
    return Value::boolean(json.get<bool>());
  case OrderedJSON::value_t::number_integer:
    return Value::fromInt(json.get<int64_t>());
  case OrderedJSON::value_t::number_unsigned: {
    uint64_t u = json.get<uint64_t>();
    if (u > uint64_t(INT64_MAX))
      return Value::fromFloat(double(u));
    return Value::fromInt(int64_t(u));
  }
  case OrderedJSON::value_t::number_float:
    return Value::fromFloat(json.get<double>());
  case OrderedJSON::value_t::string:
    return Value::string(json.get<std::string>());
  case OrderedJSON::value_t::array: {
    std::vector<Value> items;
    for (const auto &item : json) {
      auto value = fromJSON(item, depth + 1);
      if (!value)
        return value.takeError();
      items.push_back(std::move(*value));
    }
    return Value::list(std::move(items));
  }
  case OrderedJSON::value_t::object: {
    Dict dict;
    for (const auto &[key, item] : json.items()) {
      auto value = fromJSON(item, depth + 1);
      if (!value)
        return value.takeError();
      dict.set(key, std::move(*value));
    }
    return Value::dict(std::move(dict));
  }
  default:
    return llvm::createStringError("a value JSON does not have");
  }
}

} // namespace

llvm::Expected<std::string> tmpl::toJSON(const Value &value,
                                         const JSONStyle &style) {
  std::string out;
  if (auto error = writeJSON(value, style, 0, out))
    return std::move(error);
  return out;
}

llvm::Expected<Value> tmpl::parseJSONValue(llvm::StringRef text,
                                           llvm::StringRef name, ErrorId id) {
  // linnet's own reader first: it checks the size and nesting limits every
  // JSON input has, and its errors give a line and column.
  if (auto checked = parseJSON(text); !checked)
    return makeError(id, "`" + name + "` is not valid JSON: " +
                             llvm::toString(checked.takeError()));
  OrderedJSON json;
  try {
    json = OrderedJSON::parse(text.begin(), text.end());
  } catch (const std::exception &error) {
    return makeError(id, "`" + name + "` is not valid JSON: " + error.what());
  }
  auto value = fromJSON(json, 0);
  if (!value)
    return makeError(id,
                     "`" + name + "`: " + llvm::toString(value.takeError()));
  return value;
}

//===- Builtins.cpp - Jinja's filters and tests, Python's methods ---------===//
//
// Each filter and test behaves as jinja2 3.1's does under transformers (its
// `tojson` is json.dumps with ensure_ascii=False and no key sorting), each
// method as CPython's: these are the semantics the templates were written
// against. The tables at the end are the only place a name is bound.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/Builtins.h"

#include "linnet/Template/Unicode.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <ctime>

using namespace linnet;
using namespace linnet::tmpl;

char BuiltinError::ID = 0;

llvm::Error tmpl::renderError(const llvm::Twine &message) {
  return llvm::make_error<BuiltinError>(ErrorId::TemplateRenderFailed,
                                        message.str());
}

namespace {

using Kind = Value::Kind;

/// The argument at `position`, or the keyword `name`, or null.
const Value *argument(const CallArguments &arguments, size_t position,
                      llvm::StringRef name) {
  for (const auto &[keyword, value] : arguments.keywords)
    if (keyword == name)
      return &value;
  if (position < arguments.positional.size())
    return &arguments.positional[position];
  return nullptr;
}

bool flag(const CallArguments &arguments, size_t position, llvm::StringRef name,
          bool otherwise = false) {
  const Value *value = argument(arguments, position, name);
  return value ? value->truthy() : otherwise;
}

llvm::Expected<std::string> stringArgument(const CallArguments &arguments,
                                           size_t position,
                                           llvm::StringRef name,
                                           llvm::StringRef what) {
  const Value *value = argument(arguments, position, name);
  if (!value)
    return renderError(what + " needs `" + name + "`");
  if (!value->is(Kind::String))
    return renderError(what + ": `" + name + "` must be a string, not " +
                       value->typeName());
  return value->text;
}

/// Python's str.strip family; `chars` null strips whitespace.
std::string stripText(llvm::StringRef text, const Value *chars, bool left,
                      bool right) {
  std::vector<size_t> offsets = codePointOffsets(text);
  size_t count = offsets.size() - 1;
  std::vector<int32_t> strip;
  if (chars && chars->is(Kind::String))
    for (size_t i = 0; i < chars->text.size();)
      strip.push_back(decodeCodePoint(chars->text, i));
  auto strippable = [&](size_t index) {
    size_t offset = offsets[index];
    int32_t c = decodeCodePoint(text, offset);
    if (chars && chars->is(Kind::String))
      return llvm::is_contained(strip, c);
    return isPythonSpace(c);
  };
  size_t begin = 0, end = count;
  if (left)
    while (begin < end && strippable(begin))
      ++begin;
  if (right)
    while (end > begin && strippable(end - 1))
      --end;
  return text.substr(offsets[begin], offsets[end] - offsets[begin]).str();
}

/// Python's str.split(sep, maxsplit) (or rsplit when `fromRight`).
std::vector<Value> splitText(llvm::StringRef text, const Value *separator,
                             int64_t maxSplit, bool fromRight) {
  std::vector<std::string> parts;
  if (separator && separator->is(Kind::String)) {
    llvm::StringRef sep = separator->text;
    if (!fromRight) {
      llvm::StringRef rest = text;
      while (maxSplit != 0) {
        size_t at = rest.find(sep);
        if (at == llvm::StringRef::npos)
          break;
        parts.push_back(rest.substr(0, at).str());
        rest = rest.substr(at + sep.size());
        --maxSplit;
      }
      parts.push_back(rest.str());
    } else {
      llvm::StringRef rest = text;
      while (maxSplit != 0) {
        size_t at = rest.rfind(sep);
        if (at == llvm::StringRef::npos)
          break;
        parts.insert(parts.begin(), rest.substr(at + sep.size()).str());
        rest = rest.substr(0, at);
        --maxSplit;
      }
      parts.insert(parts.begin(), rest.str());
    }
  } else {
    // Runs of whitespace; no empty strings at either end.
    std::vector<std::pair<size_t, size_t>> words;
    for (size_t i = 0; i < text.size();) {
      size_t start = i;
      int32_t c = decodeCodePoint(text, i);
      if (isPythonSpace(c))
        continue;
      size_t end = i;
      while (end < text.size()) {
        size_t next = end;
        if (isPythonSpace(decodeCodePoint(text, next)))
          break;
        end = next;
      }
      words.push_back({start, end});
      i = end;
    }
    if (maxSplit < 0 || size_t(maxSplit) >= words.size()) {
      for (auto [start, end] : words)
        parts.push_back(text.substr(start, end - start).str());
    } else if (!fromRight) {
      for (size_t w = 0; w < size_t(maxSplit); ++w)
        parts.push_back(
            text.substr(words[w].first, words[w].second - words[w].first)
                .str());
      // The rest keeps its trailing whitespace, as Python's does.
      parts.push_back(text.substr(words[maxSplit].first).str());
    } else {
      size_t keep = words.size() - size_t(maxSplit);
      parts.push_back(text.substr(0, words[keep - 1].second).str());
      for (size_t w = keep; w < words.size(); ++w)
        parts.push_back(
            text.substr(words[w].first, words[w].second - words[w].first)
                .str());
    }
  }
  std::vector<Value> values;
  for (auto &part : parts)
    values.push_back(Value::string(std::move(part)));
  return values;
}

std::string replaceText(llvm::StringRef text, llvm::StringRef old,
                        llvm::StringRef replacement, int64_t count) {
  std::string out;
  if (old.empty()) {
    // Python inserts the replacement between every character.
    std::vector<size_t> offsets = codePointOffsets(text);
    for (size_t i = 0; i + 1 < offsets.size(); ++i) {
      if (count < 0 || int64_t(i) < count)
        out += replacement;
      out += text.substr(offsets[i], offsets[i + 1] - offsets[i]);
    }
    if (count < 0 || int64_t(offsets.size() - 1) < count)
      out += replacement;
    return out;
  }
  llvm::StringRef rest = text;
  while (count != 0) {
    size_t at = rest.find(old);
    if (at == llvm::StringRef::npos)
      break;
    out += rest.substr(0, at);
    out += replacement;
    rest = rest.substr(at + old.size());
    --count;
  }
  out += rest;
  return out;
}

/// Python's str.splitlines().
std::vector<std::string> splitLines(llvm::StringRef text) {
  std::vector<std::string> lines;
  std::string line;
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    int32_t c = decodeCodePoint(text, i);
    bool isBreak = c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
                   c == 0x1C || c == 0x1D || c == 0x1E || c == 0x85 ||
                   c == 0x2028 || c == 0x2029;
    if (!isBreak) {
      line.append(text.data() + start, i - start);
      continue;
    }
    if (c == '\r' && i < text.size() && text[i] == '\n')
      ++i;
    lines.push_back(std::move(line));
    line.clear();
  }
  if (!line.empty())
    lines.push_back(std::move(line));
  return lines;
}

std::string capitalizeText(llvm::StringRef text) {
  if (text.empty())
    return "";
  size_t i = 0;
  decodeCodePoint(text, i);
  return toUpper(text.substr(0, i)) + toLower(text.substr(i));
}

llvm::Expected<int64_t> length(const Value &value) {
  switch (value.kind) {
  case Kind::Undefined:
    return 0;
  case Kind::String:
    return int64_t(codePointOffsets(value.text).size() - 1);
  case Kind::List:
    if (!value.isIterator())
      return int64_t(value.items->size());
    break;
  case Kind::Dict:
  case Kind::Namespace:
    return int64_t(value.map->entries.size());
  default:
    break;
  }
  return renderError("object of type " + value.typeName() + " has no length");
}

// Filters.

llvm::Expected<Value> filterToJSON(const Value &input, CallArguments &args) {
  // transformers: tojson(x, ensure_ascii=False, indent=None,
  // separators=None, sort_keys=False).
  JSONStyle style;
  bool ensureASCII = flag(args, 0, "ensure_ascii");
  if (const Value *indent = argument(args, 1, "indent");
      indent && !indent->is(Kind::None)) {
    if (indent->is(Kind::String))
      style.indent = indent->text;
    else if (indent->is(Kind::Int))
      style.indent = std::string(
          size_t(std::clamp<int64_t>(indent->integer, 0, 1024)), ' ');
    else
      return renderError("tojson: `indent` must be an integer or a string");
    style.itemSeparator = ",";
  }
  if (const Value *separators = argument(args, 2, "separators");
      separators && !separators->is(Kind::None)) {
    if (!separators->is(Kind::List) || separators->items->size() != 2 ||
        !(*separators->items)[0].is(Kind::String) ||
        !(*separators->items)[1].is(Kind::String))
      return renderError("tojson: `separators` must be two strings");
    style.itemSeparator = (*separators->items)[0].text;
    style.keySeparator = (*separators->items)[1].text;
  }
  style.sortKeys = flag(args, 3, "sort_keys");
  auto json = toJSON(input, style);
  if (!json)
    return renderError("tojson: " + llvm::toString(json.takeError()));
  if (!ensureASCII)
    return Value::string(std::move(*json));
  std::string ascii;
  for (size_t i = 0; i < json->size();) {
    size_t start = i;
    int32_t c = decodeCodePoint(*json, i);
    if (c >= 0 && c < 0x80) {
      ascii.append(*json, start, i - start);
      continue;
    }
    auto escape = [&](unsigned unit) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", unit);
      ascii += buffer;
    };
    if (c < 0x10000) {
      escape(unsigned(c));
    } else {
      escape(0xD800 + ((unsigned(c) - 0x10000) >> 10));
      escape(0xDC00 + ((unsigned(c) - 0x10000) & 0x3FF));
    }
  }
  return Value::string(std::move(ascii));
}

/// A string result that stays Markup when its input was (as the methods
/// of markupsafe's Markup keep it).
Value sameKind(const Value &input, std::string text) {
  Value result = Value::string(std::move(text));
  result.markup = input.markup;
  return result;
}

llvm::Expected<Value> filterTrim(const Value &input, CallArguments &args) {
  return sameKind(
      input, stripText(input.str(), argument(args, 0, "chars"), true, true));
}

llvm::Expected<Value> filterLength(const Value &input, CallArguments &) {
  auto n = length(input);
  if (!n)
    return n.takeError();
  return Value::fromInt(*n);
}

llvm::Expected<Value> filterItems(const Value &input, CallArguments &) {
  if (input.isUndefined())
    return Value::list({});
  if (!input.is(Kind::Dict))
    return renderError("items: can only get the item pairs of a mapping, not " +
                       input.typeWithArticle());
  std::vector<Value> pairs;
  for (const auto &[key, value] : input.map->entries)
    pairs.push_back(Value::list({Value::string(key), value}, true));
  return Value::lazy(std::move(pairs), "dict_itemiterator");
}

llvm::Expected<Value> filterString(const Value &input, CallArguments &) {
  return sameKind(input, input.str());
}

llvm::Expected<Value> filterSafe(const Value &input, CallArguments &) {
  Value markup = input.is(Kind::String) ? input : Value::string(input.str());
  markup.markup = true;
  return markup;
}

llvm::Expected<Value> filterDefault(const Value &input, CallArguments &args) {
  bool useDefault =
      input.isUndefined() || (flag(args, 1, "boolean") && !input.truthy());
  if (!useDefault)
    return input;
  const Value *fallback = argument(args, 0, "default_value");
  return fallback ? *fallback : Value::string("");
}

llvm::Expected<Value> filterUpper(const Value &input, CallArguments &) {
  return Value::string(toUpper(input.str()));
}

llvm::Expected<Value> filterLower(const Value &input, CallArguments &) {
  return Value::string(toLower(input.str()));
}

llvm::Expected<Value> filterCapitalize(const Value &input, CallArguments &) {
  return Value::string(capitalizeText(input.str()));
}

llvm::Expected<Value> filterTitle(const Value &input, CallArguments &) {
  // jinja2: each piece after a run of `-`, whitespace or an opening bracket
  // capitalized.
  std::string text = input.str(), out;
  bool wordStart = true;
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    int32_t c = decodeCodePoint(text, i);
    llvm::StringRef piece(text.data() + start, i - start);
    bool separator = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' ||
                     isPythonSpace(c);
    if (separator) {
      out += piece;
      wordStart = true;
    } else {
      out += wordStart ? toUpper(piece) : toLower(piece);
      wordStart = false;
    }
  }
  return Value::string(std::move(out));
}

llvm::Expected<Value> filterReplace(const Value &input, CallArguments &args) {
  auto old = stringArgument(args, 0, "old", "replace");
  if (!old)
    return old.takeError();
  auto replacement = stringArgument(args, 1, "new", "replace");
  if (!replacement)
    return replacement.takeError();
  int64_t count = -1;
  if (const Value *c = argument(args, 2, "count"); c && c->is(Kind::Int))
    count = c->integer;
  return Value::string(replaceText(input.str(), *old, *replacement, count));
}

llvm::Expected<Value> filterJoin(const Value &input, CallArguments &args) {
  std::string separator;
  if (const Value *d = argument(args, 0, "d"))
    separator = d->str();
  const Value *attribute = argument(args, 1, "attribute");
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  std::string out;
  for (size_t i = 0; i < items->size(); ++i) {
    if (i)
      out += separator;
    Value item = (*items)[i];
    if (attribute) {
      auto got = getAttribute(item, attribute->str());
      if (!got)
        return got.takeError();
      item = *got;
    }
    out += item.str();
  }
  return Value::string(std::move(out));
}

llvm::Expected<Value> filterList(const Value &input, CallArguments &) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  return Value::list(std::move(*items));
}

llvm::Expected<Value> filterFirst(const Value &input, CallArguments &) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  if (items->empty())
    return Value::undefined("no first item, the sequence was empty");
  return items->front();
}

llvm::Expected<Value> filterLast(const Value &input, CallArguments &) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  if (items->empty())
    return Value::undefined("no last item, the sequence was empty");
  return items->back();
}

llvm::Expected<Value> filterReverse(const Value &input, CallArguments &) {
  if (input.is(Kind::String)) {
    std::vector<size_t> offsets = codePointOffsets(input.text);
    std::string out;
    for (size_t i = offsets.size() - 1; i > 0; --i)
      out.append(input.text, offsets[i - 1], offsets[i] - offsets[i - 1]);
    return Value::string(std::move(out));
  }
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  std::reverse(items->begin(), items->end());
  return Value::lazy(std::move(*items), "list_reverseiterator");
}

/// The value sorting compares: an attribute of it, lower-cased unless
/// case-sensitive.
llvm::Expected<Value> sortKey(const Value &item, const Value *attribute,
                              bool caseSensitive) {
  Value key = item;
  if (attribute && !attribute->is(Kind::None)) {
    std::string path = attribute->str();
    for (llvm::StringRef part : llvm::split(path, '.')) {
      auto got = getAttribute(key, part);
      if (!got)
        return got.takeError();
      key = *got;
    }
  }
  if (!caseSensitive && key.is(Kind::String))
    key = Value::string(toLower(key.text));
  return key;
}

llvm::Error sortValues(std::vector<Value> &items, std::vector<Value> &keys,
                       bool reverse) {
  // Python's sort is stable and stops at the first pair it cannot compare;
  // std::sort on (key, position) is stable too, and the first error wins.
  std::optional<llvm::Error> failure;
  auto before = [&](size_t a, size_t b) {
    if (failure)
      return a < b;
    auto less =
        reverse ? lessThan(keys[b], keys[a]) : lessThan(keys[a], keys[b]);
    if (!less) {
      failure = less.takeError();
      return a < b;
    }
    if (*less)
      return true;
    auto greater =
        reverse ? lessThan(keys[a], keys[b]) : lessThan(keys[b], keys[a]);
    if (!greater) {
      failure = greater.takeError();
      return a < b;
    }
    return !*greater && a < b;
  };
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), before);
  if (failure)
    return std::move(*failure);
  std::vector<Value> sorted;
  for (size_t i : order)
    sorted.push_back(items[i]);
  items = std::move(sorted);
  return llvm::Error::success();
}

llvm::Expected<Value> filterSort(const Value &input, CallArguments &args) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  std::vector<Value> keys;
  for (const Value &item : *items) {
    auto key = sortKey(item, argument(args, 2, "attribute"),
                       flag(args, 1, "case_sensitive"));
    if (!key)
      return key.takeError();
    keys.push_back(*key);
  }
  if (auto error = sortValues(*items, keys, flag(args, 0, "reverse")))
    return std::move(error);
  return Value::list(std::move(*items));
}

llvm::Expected<Value> filterDictSort(const Value &input, CallArguments &args) {
  if (!input.is(Kind::Dict))
    return renderError("dictsort: " + input.typeWithArticle() +
                       " is no mapping");
  bool byValue = false;
  if (const Value *by = argument(args, 1, "by")) {
    if (by->str() == "value")
      byValue = true;
    else if (by->str() != "key")
      return renderError("dictsort: `by` must be \"key\" or \"value\"");
  }
  std::vector<Value> pairs, keys;
  for (const auto &[key, value] : input.map->entries) {
    pairs.push_back(Value::list({Value::string(key), value}, true));
    auto sortBy = sortKey(byValue ? value : Value::string(key), nullptr,
                          flag(args, 0, "case_sensitive"));
    if (!sortBy)
      return sortBy.takeError();
    keys.push_back(*sortBy);
  }
  if (auto error = sortValues(pairs, keys, flag(args, 2, "reverse")))
    return std::move(error);
  return Value::list(std::move(pairs));
}

llvm::Expected<Value> filterUnique(const Value &input, CallArguments &args) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  std::vector<Value> unique, seen;
  for (const Value &item : *items) {
    auto key = sortKey(item, argument(args, 1, "attribute"),
                       flag(args, 0, "case_sensitive"));
    if (!key)
      return key.takeError();
    if (llvm::any_of(seen, [&](const Value &s) { return equals(s, *key); }))
      continue;
    seen.push_back(*key);
    unique.push_back(item);
  }
  return Value::lazy(std::move(unique), "generator");
}

llvm::Expected<Value> filterIndent(const Value &input, CallArguments &args) {
  std::string indentation = "    ";
  if (const Value *width = argument(args, 0, "width")) {
    if (width->is(Kind::String))
      indentation = width->text;
    else if (width->is(Kind::Int))
      indentation = std::string(
          size_t(std::clamp<int64_t>(width->integer, 0, 1024)), ' ');
  }
  bool first = flag(args, 1, "first"), blank = flag(args, 2, "blank");
  std::vector<std::string> lines = splitLines(input.str() + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) {
      out += "\n";
      if (blank || !lines[i].empty())
        out += indentation;
    }
    out += lines[i];
  }
  if (first)
    out = indentation + out;
  return Value::string(std::move(out));
}

llvm::Expected<Value> filterInt(const Value &input, CallArguments &args) {
  const Value *fallback = argument(args, 0, "default");
  Value otherwise = fallback ? *fallback : Value::fromInt(0);
  if (input.is(Kind::Int) || input.is(Kind::Bool))
    return Value::fromInt(input.integer);
  if (input.is(Kind::Float))
    return std::isfinite(input.real) && std::fabs(input.real) < 9.2e18
               ? Value::fromInt(int64_t(input.real))
               : otherwise;
  if (input.is(Kind::String)) {
    std::string text = stripText(input.text, nullptr, true, true);
    int64_t value;
    if (!llvm::StringRef(text).getAsInteger(10, value))
      return Value::fromInt(value);
    char *end = nullptr;
    double real = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() &&
        std::isfinite(real) && std::fabs(real) < 9.2e18)
      return Value::fromInt(int64_t(real));
  }
  return otherwise;
}

llvm::Expected<Value> filterFloat(const Value &input, CallArguments &args) {
  const Value *fallback = argument(args, 0, "default");
  Value otherwise = fallback ? *fallback : Value::fromFloat(0);
  if (input.isNumber())
    return Value::fromFloat(input.asDouble());
  if (input.is(Kind::String)) {
    std::string text = stripText(input.text, nullptr, true, true);
    char *end = nullptr;
    double real = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size())
      return Value::fromFloat(real);
  }
  return otherwise;
}

llvm::Expected<Value> filterAbs(const Value &input, CallArguments &) {
  if (input.is(Kind::Float))
    return Value::fromFloat(std::fabs(input.real));
  if (input.is(Kind::Int) || input.is(Kind::Bool)) {
    if (input.integer == INT64_MIN)
      return renderError("abs: overflows 64-bit integers");
    return Value::fromInt(input.integer < 0 ? -input.integer : input.integer);
  }
  return renderError("abs: " + input.typeWithArticle() + " is no number");
}

llvm::Expected<Value> filterRound(const Value &input, CallArguments &args) {
  if (!input.isNumber())
    return renderError("round: " + input.typeWithArticle() + " is no number");
  int64_t precision = 0;
  if (const Value *p = argument(args, 0, "precision"); p && p->is(Kind::Int))
    precision = std::clamp<int64_t>(p->integer, -300, 300);
  std::string method = "common";
  if (const Value *m = argument(args, 1, "method"))
    method = m->str();
  double scale = std::pow(10.0, double(precision));
  double x = input.asDouble() * scale;
  if (method == "common")
    x = std::nearbyint(x);
  else if (method == "ceil")
    x = std::ceil(x);
  else if (method == "floor")
    x = std::floor(x);
  else
    return renderError("round: `method` must be common, ceil or floor");
  return Value::fromFloat(x / scale);
}

llvm::Expected<Value> filterWordCount(const Value &input, CallArguments &) {
  int64_t words = 0;
  bool inWord = false;
  std::string text = input.str();
  for (size_t i = 0; i < text.size();) {
    int32_t c = decodeCodePoint(text, i);
    bool wordCharacter =
        c == '_' ||
        (c >= 0 && (c < 0x80 ? llvm::isAlnum(char(c)) : !isPythonSpace(c)));
    if (wordCharacter && !inWord)
      ++words;
    inWord = wordCharacter;
  }
  return Value::fromInt(words);
}

llvm::Expected<Value> filterEscape(const Value &input, CallArguments &) {
  if (input.markup)
    return input;
  Value escaped = Value::string(escapeHTML(input.str()));
  escaped.markup = true;
  return escaped;
}

} // namespace

std::string tmpl::escapeHTML(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&#34;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

namespace {

llvm::Expected<Value> reduceItems(const Value &input, CallArguments &args,
                                  bool maximum) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  if (items->empty())
    return Value::undefined(std::string("no ") + (maximum ? "max" : "min") +
                            "imum of an empty sequence");
  const Value *attribute = argument(args, 1, "attribute");
  bool caseSensitive = flag(args, 0, "case_sensitive");
  size_t best = 0;
  auto bestKey = sortKey((*items)[0], attribute, caseSensitive);
  if (!bestKey)
    return bestKey.takeError();
  for (size_t i = 1; i < items->size(); ++i) {
    auto key = sortKey((*items)[i], attribute, caseSensitive);
    if (!key)
      return key.takeError();
    auto better = maximum ? lessThan(*bestKey, *key) : lessThan(*key, *bestKey);
    if (!better)
      return better.takeError();
    if (*better) {
      best = i;
      bestKey = std::move(key);
    }
  }
  return (*items)[best];
}

llvm::Expected<Value> filterMax(const Value &input, CallArguments &args) {
  return reduceItems(input, args, true);
}

llvm::Expected<Value> filterMin(const Value &input, CallArguments &args) {
  return reduceItems(input, args, false);
}

llvm::Expected<Value> filterSum(const Value &input, CallArguments &args) {
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  const Value *attribute = argument(args, 0, "attribute");
  const Value *start = argument(args, 1, "start");
  Value total = start ? *start : Value::fromInt(0);
  for (const Value &item : *items) {
    auto term = sortKey(item, attribute, true);
    if (!term)
      return term.takeError();
    if (!total.isNumber() || !term->isNumber())
      return renderError("sum: " + term->typeName() + " is no number");
    if (total.is(Kind::Float) || term->is(Kind::Float))
      total = Value::fromFloat(total.asDouble() + term->asDouble());
    else if (__builtin_add_overflow(total.integer, term->integer,
                                    &total.integer))
      return renderError("sum: overflows 64-bit integers");
    else
      total.kind = Kind::Int;
  }
  return total;
}

/// select, reject, selectattr, rejectattr: keep the items (or their
/// attribute) that pass the named test, or are true when none is named.
llvm::Expected<Value> selectItems(const Value &input, CallArguments &args,
                                  bool byAttribute, bool keep) {
  if (!input.truthy()) // jinja2 iterates only a true value (so none is empty)
    return Value::lazy({}, "generator");
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  size_t next = 0;
  std::string attribute;
  if (byAttribute) {
    if (args.positional.empty())
      return renderError("selectattr and rejectattr need an attribute");
    attribute = args.positional[next++].str();
  }
  const TestFunction *test = nullptr;
  if (next < args.positional.size()) {
    std::string name = args.positional[next++].str();
    test = findTest(name);
    if (!test)
      return renderError("there is no test named `" + name + "`");
  }
  CallArguments testArguments;
  testArguments.positional.assign(args.positional.begin() + next,
                                  args.positional.end());
  std::vector<Value> kept;
  for (const Value &item : *items) {
    Value subject = item;
    if (byAttribute) {
      auto got = sortKey(item, &args.positional[0], true);
      if (!got)
        return got.takeError();
      subject = *got;
    }
    bool passes;
    if (test) {
      auto result = test->apply(subject, testArguments);
      if (!result)
        return result.takeError();
      passes = *result;
    } else {
      passes = subject.truthy();
    }
    if (passes == keep)
      kept.push_back(item);
  }
  return Value::lazy(std::move(kept), "generator");
}

llvm::Expected<Value> filterSelect(const Value &input, CallArguments &args) {
  return selectItems(input, args, false, true);
}
llvm::Expected<Value> filterReject(const Value &input, CallArguments &args) {
  return selectItems(input, args, false, false);
}
llvm::Expected<Value> filterSelectAttr(const Value &input,
                                       CallArguments &args) {
  return selectItems(input, args, true, true);
}
llvm::Expected<Value> filterRejectAttr(const Value &input,
                                       CallArguments &args) {
  return selectItems(input, args, true, false);
}

llvm::Expected<Value> filterMap(const Value &input, CallArguments &args) {
  if (!input.truthy())
    return Value::lazy({}, "generator");
  auto items = iterate(input);
  if (!items)
    return items.takeError();
  std::vector<Value> mapped;
  if (const Value *attribute = argument(args, 99, "attribute")) {
    const Value *fallback = argument(args, 99, "default");
    for (const Value &item : *items) {
      auto got = sortKey(item, attribute, true);
      if (!got)
        return got.takeError();
      mapped.push_back(got->isUndefined() && fallback ? *fallback : *got);
    }
    return Value::lazy(std::move(mapped), "generator");
  }
  if (args.positional.empty())
    return renderError("map needs a filter name or `attribute=`");
  std::string name = args.positional[0].str();
  const FilterFunction *filter = findFilter(name);
  if (!filter)
    return renderError("there is no filter named `" + name + "`");
  CallArguments filterArguments;
  filterArguments.positional.assign(args.positional.begin() + 1,
                                    args.positional.end());
  filterArguments.keywords = args.keywords;
  for (const Value &item : *items) {
    auto result = filter->apply(item, filterArguments);
    if (!result)
      return result.takeError();
    mapped.push_back(*result);
  }
  return Value::lazy(std::move(mapped), "generator");
}

// Tests.

llvm::Expected<bool> testDefined(const Value &v, CallArguments &) {
  return !v.isUndefined();
}
llvm::Expected<bool> testUndefined(const Value &v, CallArguments &) {
  return v.isUndefined();
}
llvm::Expected<bool> testNone(const Value &v, CallArguments &) {
  return v.is(Kind::None);
}
llvm::Expected<bool> testString(const Value &v, CallArguments &) {
  return v.is(Kind::String);
}
llvm::Expected<bool> testMapping(const Value &v, CallArguments &) {
  return v.is(Kind::Dict);
}
/// `is iterable` and `is sequence` (jinja2's Undefined is both).
llvm::Expected<bool> testIterable(const Value &v, CallArguments &) {
  return v.isUndefined() || v.is(Kind::String) || v.is(Kind::List) ||
         v.is(Kind::Dict);
}
llvm::Expected<bool> testNumber(const Value &v, CallArguments &) {
  return v.isNumber();
}
llvm::Expected<bool> testInteger(const Value &v, CallArguments &) {
  return v.is(Kind::Int);
}
llvm::Expected<bool> testFloat(const Value &v, CallArguments &) {
  return v.is(Kind::Float);
}
llvm::Expected<bool> testBoolean(const Value &v, CallArguments &) {
  return v.is(Kind::Bool);
}
llvm::Expected<bool> testTrue(const Value &v, CallArguments &) {
  return v.is(Kind::Bool) && v.integer;
}
llvm::Expected<bool> testFalse(const Value &v, CallArguments &) {
  return v.is(Kind::Bool) && !v.integer;
}
llvm::Expected<bool> testCallable(const Value &v, CallArguments &) {
  return v.is(Kind::Callable);
}
llvm::Expected<bool> testLower(const Value &v, CallArguments &) {
  std::string text = v.str();
  return text == toLower(text) && text != toUpper(text);
}
llvm::Expected<bool> testUpper(const Value &v, CallArguments &) {
  std::string text = v.str();
  return text == toUpper(text) && text != toLower(text);
}

const Value &operand(CallArguments &args, llvm::StringRef test) {
  static const Value missing = Value::undefined();
  return args.positional.empty() ? missing : args.positional[0];
}

llvm::Expected<bool> testEqual(const Value &v, CallArguments &args) {
  return equals(v, operand(args, "eq"));
}
llvm::Expected<bool> testNotEqual(const Value &v, CallArguments &args) {
  return !equals(v, operand(args, "ne"));
}
llvm::Expected<bool> testLess(const Value &v, CallArguments &args) {
  return lessThan(v, operand(args, "lt"));
}
llvm::Expected<bool> testGreater(const Value &v, CallArguments &args) {
  return lessThan(operand(args, "gt"), v);
}
llvm::Expected<bool> testLessOrEqual(const Value &v, CallArguments &args) {
  auto greater = lessThan(operand(args, "le"), v);
  if (!greater)
    return greater.takeError();
  return !*greater;
}
llvm::Expected<bool> testGreaterOrEqual(const Value &v, CallArguments &args) {
  auto less = lessThan(v, operand(args, "ge"));
  if (!less)
    return less.takeError();
  return !*less;
}
llvm::Expected<bool> testIn(const Value &v, CallArguments &args) {
  return contains(operand(args, "in"), v);
}
llvm::Expected<bool> testSameAs(const Value &v, CallArguments &args) {
  const Value &other = operand(args, "sameas");
  if (v.kind != other.kind)
    return false;
  switch (v.kind) {
  case Kind::None:
  case Kind::Undefined:
    return true;
  case Kind::Bool:
    return v.integer == other.integer;
  case Kind::List:
    return v.items == other.items;
  case Kind::Dict:
  case Kind::Namespace:
    return v.map == other.map;
  case Kind::Callable:
    return v.function == other.function;
  default:
    return equals(v, other);
  }
}
llvm::Expected<bool> divisible(const Value &v, const Value &by) {
  if (!(v.is(Kind::Int) || v.is(Kind::Bool)) ||
      !(by.is(Kind::Int) || by.is(Kind::Bool)))
    return renderError("divisibleby, odd and even take integers");
  if (by.integer == 0)
    return renderError("division by zero");
  if (by.integer == -1)
    return true;
  return v.integer % by.integer == 0;
}
llvm::Expected<bool> testDivisibleBy(const Value &v, CallArguments &args) {
  return divisible(v, operand(args, "divisibleby"));
}
llvm::Expected<bool> testEven(const Value &v, CallArguments &) {
  return divisible(v, Value::fromInt(2));
}
llvm::Expected<bool> testOdd(const Value &v, CallArguments &) {
  auto even = divisible(v, Value::fromInt(2));
  if (!even)
    return even.takeError();
  return !*even;
}
llvm::Expected<bool> testFilter(const Value &v, CallArguments &) {
  return v.is(Kind::String) && findFilter(v.text);
}
llvm::Expected<bool> testTest(const Value &v, CallArguments &) {
  return v.is(Kind::String) && findTest(v.text);
}
llvm::Expected<bool> testEscaped(const Value &, CallArguments &) {
  return false;
}

const FilterFunction kFilters[] = {
    {"abs", filterAbs},
    {"capitalize", filterCapitalize},
    {"count", filterLength},
    {"d", filterDefault},
    {"default", filterDefault},
    {"dictsort", filterDictSort},
    {"e", filterEscape},
    {"escape", filterEscape},
    {"first", filterFirst},
    {"float", filterFloat},
    {"indent", filterIndent},
    {"int", filterInt},
    {"items", filterItems},
    {"join", filterJoin},
    {"last", filterLast},
    {"length", filterLength},
    {"list", filterList},
    {"lower", filterLower},
    {"map", filterMap},
    {"max", filterMax},
    {"min", filterMin},
    {"reject", filterReject},
    {"rejectattr", filterRejectAttr},
    {"replace", filterReplace},
    {"reverse", filterReverse},
    {"round", filterRound},
    {"safe", filterSafe},
    {"select", filterSelect},
    {"selectattr", filterSelectAttr},
    {"sort", filterSort},
    {"string", filterString},
    {"sum", filterSum},
    {"title", filterTitle},
    {"tojson", filterToJSON},
    {"trim", filterTrim},
    {"unique", filterUnique},
    {"upper", filterUpper},
    {"wordcount", filterWordCount},
};

const TestFunction kTests[] = {
    {"!=", testNotEqual},
    {"<", testLess},
    {"<=", testLessOrEqual},
    {"==", testEqual},
    {">", testGreater},
    {">=", testGreaterOrEqual},
    {"boolean", testBoolean},
    {"callable", testCallable},
    {"defined", testDefined},
    {"divisibleby", testDivisibleBy},
    {"eq", testEqual},
    {"equalto", testEqual},
    {"escaped", testEscaped},
    {"even", testEven},
    {"false", testFalse},
    {"filter", testFilter},
    {"float", testFloat},
    {"ge", testGreaterOrEqual},
    {"greaterthan", testGreater},
    {"gt", testGreater},
    {"in", testIn},
    {"integer", testInteger},
    {"iterable", testIterable},
    {"le", testLessOrEqual},
    {"lessthan", testLess},
    {"lower", testLower},
    {"lt", testLess},
    {"mapping", testMapping},
    {"ne", testNotEqual},
    {"none", testNone},
    {"number", testNumber},
    {"odd", testOdd},
    {"sameas", testSameAs},
    {"sequence", testIterable},
    {"string", testString},
    {"test", testTest},
    {"true", testTrue},
    {"undefined", testUndefined},
    {"upper", testUpper},
};

// Methods.

/// Python's str.format with `{}`, `{0}` and `{name}` fields (no format
/// specifications or conversions).
llvm::Expected<Value> formatText(llvm::StringRef pattern, CallArguments &args) {
  std::string out;
  size_t automatic = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '}' && i + 1 < pattern.size() && pattern[i + 1] == '}') {
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == llvm::StringRef::npos)
      return renderError("str.format: a `{` is not closed");
    llvm::StringRef field = pattern.substr(i + 1, close - i - 1);
    if (field.contains(':') || field.contains('!') || field.contains('.') ||
        field.contains('['))
      return llvm::make_error<BuiltinError>(
          ErrorId::TemplateUnsupported,
          "str.format: the field `{" + field.str() +
              "}` has a specification linnet does not implement");
    const Value *value = nullptr;
    size_t position;
    if (field.empty())
      position = automatic++;
    if (field.empty() || !field.getAsInteger(10, position)) {
      if (position < args.positional.size())
        value = &args.positional[position];
    } else {
      value = argument(args, size_t(-1), field);
    }
    if (!value)
      return renderError("str.format: no value for `{" + field + "}`");
    out += value->str();
    i = close;
  }
  return Value::string(std::move(out));
}

llvm::Expected<bool> affixMatches(const Value &self, CallArguments &args,
                                  bool prefix) {
  if (args.positional.empty())
    return renderError(prefix ? "startswith needs a prefix"
                              : "endswith needs a suffix");
  const Value &affix = args.positional[0];
  std::vector<Value> choices =
      affix.is(Kind::List) ? *affix.items : std::vector<Value>{affix};
  for (const Value &choice : choices) {
    if (!choice.is(Kind::String))
      return renderError(std::string(prefix ? "startswith" : "endswith") +
                         " takes strings, not " + choice.typeName());
    if (prefix ? llvm::StringRef(self.text).starts_with(choice.text)
               : llvm::StringRef(self.text).ends_with(choice.text))
      return true;
  }
  return false;
}

std::optional<Value> stringMethod(const Value &self, llvm::StringRef name) {
  using Fn = llvm::Expected<Value> (*)(const Value &, CallArguments &);
  static const std::pair<llvm::StringLiteral, Fn> methods[] = {
      {"startswith",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         auto r = affixMatches(s, a, true);
         if (!r)
           return r.takeError();
         return Value::boolean(*r);
       }},
      {"endswith",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         auto r = affixMatches(s, a, false);
         if (!r)
           return r.takeError();
         return Value::boolean(*r);
       }},
      {"strip",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         return sameKind(
             s, stripText(s.text, argument(a, 0, "chars"), true, true));
       }},
      {"lstrip",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         return sameKind(
             s, stripText(s.text, argument(a, 0, "chars"), true, false));
       }},
      {"rstrip",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         return sameKind(
             s, stripText(s.text, argument(a, 0, "chars"), false, true));
       }},
      {"split",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         const Value *sep = argument(a, 0, "sep");
         if (sep && sep->is(Kind::String) && sep->text.empty())
           return renderError("split: empty separator");
         const Value *max = argument(a, 1, "maxsplit");
         return Value::list(
             splitText(s.text, sep, max ? max->integer : -1, false));
       }},
      {"rsplit",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         const Value *sep = argument(a, 0, "sep");
         if (sep && sep->is(Kind::String) && sep->text.empty())
           return renderError("rsplit: empty separator");
         const Value *max = argument(a, 1, "maxsplit");
         return Value::list(
             splitText(s.text, sep, max ? max->integer : -1, true));
       }},
      {"splitlines",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         std::vector<Value> lines;
         for (auto &line : splitLines(s.text))
           lines.push_back(Value::string(std::move(line)));
         return Value::list(std::move(lines));
       }},
      {"upper",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         return Value::string(toUpper(s.text));
       }},
      {"lower",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         return Value::string(toLower(s.text));
       }},
      {"capitalize",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         return Value::string(capitalizeText(s.text));
       }},
      {"title",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         // str.title(): a cased character after an uncased one is upper.
         std::string out;
         bool previousCased = false;
         for (size_t i = 0; i < s.text.size();) {
           size_t start = i;
           int32_t c = decodeCodePoint(s.text, i);
           llvm::StringRef piece(s.text.data() + start, i - start);
           out += previousCased ? toLower(piece) : toUpper(piece);
           previousCased = isCased(c);
         }
         return Value::string(std::move(out));
       }},
      {"replace",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         auto old = stringArgument(a, 0, "old", "replace");
         if (!old)
           return old.takeError();
         auto replacement = stringArgument(a, 1, "new", "replace");
         if (!replacement)
           return replacement.takeError();
         const Value *count = argument(a, 2, "count");
         return Value::string(replaceText(s.text, *old, *replacement,
                                          count ? count->integer : -1));
       }},
      {"find",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         auto sub = stringArgument(a, 0, "sub", "find");
         if (!sub)
           return sub.takeError();
         size_t at = s.text.find(*sub);
         if (at == std::string::npos)
           return Value::fromInt(-1);
         return Value::fromInt(
             int64_t(codePointOffsets(s.text.substr(0, at)).size() - 1));
       }},
      {"count",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         auto sub = stringArgument(a, 0, "sub", "count");
         if (!sub)
           return sub.takeError();
         if (sub->empty())
           return Value::fromInt(int64_t(codePointOffsets(s.text).size()));
         int64_t n = 0;
         for (size_t at = s.text.find(*sub); at != std::string::npos;
              at = s.text.find(*sub, at + sub->size()))
           ++n;
         return Value::fromInt(n);
       }},
      {"join",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         if (a.positional.empty())
           return renderError("join needs an iterable");
         auto items = iterate(a.positional[0]);
         if (!items)
           return items.takeError();
         std::string out;
         for (size_t i = 0; i < items->size(); ++i) {
           if (!(*items)[i].is(Kind::String))
             return renderError("join: item " + llvm::Twine(i) + " is " +
                                (*items)[i].typeWithArticle() + ", not a str");
           if (i)
             out += s.text;
           out += (*items)[i].text;
         }
         return Value::string(std::move(out));
       }},
      {"format",
       [](const Value &s, CallArguments &a) -> llvm::Expected<Value> {
         return formatText(s.text, a);
       }},
      {"isdigit",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         return Value::boolean(!s.text.empty() &&
                               llvm::all_of(s.text, llvm::isDigit));
       }},
      {"isspace",
       [](const Value &s, CallArguments &) -> llvm::Expected<Value> {
         bool all = !s.text.empty();
         for (size_t i = 0; i < s.text.size() && all;)
           all = isPythonSpace(decodeCodePoint(s.text, i));
         return Value::boolean(all);
       }},
  };
  for (const auto &[methodName, fn] : methods)
    if (methodName == name) {
      Value bound = self;
      return Value::callable(
          "str." + name.str(),
          [bound, fn = fn](CallArguments &a) { return fn(bound, a); });
    }
  return std::nullopt;
}

std::optional<Value> dictMethod(const Value &self, llvm::StringRef name) {
  Value bound = self;
  if (name == "items")
    return Value::callable(
        "dict.items", [bound](CallArguments &) -> llvm::Expected<Value> {
          std::vector<Value> pairs;
          for (const auto &[key, value] : bound.map->entries)
            pairs.push_back(Value::list({Value::string(key), value}, true));
          return Value::lazy(std::move(pairs), "dict_items");
        });
  if (name == "keys" || name == "values") {
    bool keys = name == "keys";
    return Value::callable(
        keys ? "dict.keys" : "dict.values",
        [bound, keys](CallArguments &) -> llvm::Expected<Value> {
          std::vector<Value> out;
          for (const auto &[key, value] : bound.map->entries)
            out.push_back(keys ? Value::string(key) : value);
          return Value::lazy(std::move(out),
                             keys ? "dict_keys" : "dict_values");
        });
  }
  if (name == "get")
    return Value::callable(
        "dict.get", [bound](CallArguments &a) -> llvm::Expected<Value> {
          if (a.positional.empty())
            return renderError("get needs a key");
          const Value &key = a.positional[0];
          if (key.is(Kind::String))
            if (const Value *found = bound.map->find(key.text))
              return *found;
          return a.positional.size() > 1 ? a.positional[1] : Value::none();
        });
  return std::nullopt;
}

/// The methods that change a list or dict: transformers' sandbox refuses
/// them, and so does linnet.
bool isMutatingMethod(const Value &self, llvm::StringRef name) {
  static const llvm::StringLiteral listMethods[] = {
      "append", "extend", "insert", "pop",
      "remove", "clear",  "sort",   "reverse"};
  static const llvm::StringLiteral dictMethods[] = {"pop", "popitem", "update",
                                                    "setdefault", "clear"};
  if (self.is(Kind::List))
    return llvm::is_contained(listMethods, name);
  if (self.is(Kind::Dict))
    return llvm::is_contained(dictMethods, name);
  return false;
}

} // namespace

const FilterFunction *tmpl::findFilter(llvm::StringRef name) {
  for (const FilterFunction &filter : kFilters)
    if (filter.name == name)
      return &filter;
  return nullptr;
}

const TestFunction *tmpl::findTest(llvm::StringRef name) {
  for (const TestFunction &test : kTests)
    if (test.name == name)
      return &test;
  return nullptr;
}

std::optional<Value> tmpl::boundMethod(const Value &object,
                                       llvm::StringRef name) {
  if (object.is(Kind::String))
    return stringMethod(object, name);
  if (object.is(Kind::Dict))
    return dictMethod(object, name);
  return std::nullopt;
}

Dict tmpl::globalFunctions() {
  Dict globals;
  globals.set("raise_exception",
              Value::callable("raise_exception",
                              [](CallArguments &a) -> llvm::Expected<Value> {
                                std::string message =
                                    a.positional.empty()
                                        ? std::string()
                                        : a.positional[0].str();
                                return llvm::make_error<BuiltinError>(
                                    ErrorId::TemplateRaised,
                                    "the template raised an error: " + message);
                              }));
  globals.set(
      "strftime_now",
      Value::callable(
          "strftime_now", [](CallArguments &a) -> llvm::Expected<Value> {
            if (a.positional.empty() || !a.positional[0].is(Kind::String))
              return renderError("strftime_now needs a format string");
            std::time_t now = std::time(nullptr);
            std::tm local;
            localtime_r(&now, &local);
            char buffer[512];
            size_t n = std::strftime(buffer, sizeof buffer,
                                     a.positional[0].text.c_str(), &local);
            return Value::string(std::string(buffer, n));
          }));
  globals.set("namespace",
              Value::callable(
                  "namespace", [](CallArguments &a) -> llvm::Expected<Value> {
                    Dict attributes;
                    for (const Value &p : a.positional) {
                      if (!p.is(Kind::Dict))
                        return renderError("namespace() takes a dict or "
                                           "name=value pairs");
                      for (const auto &[k, v] : p.map->entries)
                        attributes.set(k, v);
                    }
                    for (const auto &[k, v] : a.keywords)
                      attributes.set(k, v);
                    return Value::nameSpace(std::move(attributes));
                  }));
  globals.set(
      "dict",
      Value::callable("dict", [](CallArguments &a) -> llvm::Expected<Value> {
        Dict entries;
        for (const auto &[k, v] : a.keywords)
          entries.set(k, v);
        return Value::dict(std::move(entries));
      }));
  globals.set(
      "range",
      Value::callable("range", [](CallArguments &a) -> llvm::Expected<Value> {
        int64_t bounds[3] = {0, 0, 1};
        size_t n = a.positional.size();
        if (n < 1 || n > 3)
          return renderError("range takes 1 to 3 integers");
        for (size_t i = 0; i < n; ++i)
          if (!a.positional[i].is(Kind::Int) && !a.positional[i].is(Kind::Bool))
            return renderError("range takes integers, not " +
                               a.positional[i].typeName());
        if (n == 1) {
          bounds[1] = a.positional[0].integer;
        } else {
          bounds[0] = a.positional[0].integer;
          bounds[1] = a.positional[1].integer;
          if (n == 3)
            bounds[2] = a.positional[2].integer;
        }
        if (bounds[2] == 0)
          return renderError("range: the step must not be zero");
        // jinja2's sandbox refuses ranges of more than 100000 items.
        double count =
            (double(bounds[1]) - double(bounds[0])) / double(bounds[2]);
        if (count > 100000)
          return renderError("range: more than 100000 items (the sandbox's "
                             "limit)");
        std::vector<Value> items;
        for (int64_t i = bounds[0];
             bounds[2] > 0 ? i < bounds[1] : i > bounds[1]; i += bounds[2])
          items.push_back(Value::fromInt(i));
        return Value::list(std::move(items));
      }));
  return globals;
}

llvm::Expected<bool> tmpl::lessThan(const Value &a, const Value &b) {
  if (a.isNumber() && b.isNumber()) {
    if (a.is(Kind::Float) || b.is(Kind::Float))
      return a.asDouble() < b.asDouble();
    return a.integer < b.integer;
  }
  if (a.is(Kind::String) && b.is(Kind::String))
    return a.text < b.text;
  if (a.is(Kind::List) && b.is(Kind::List)) {
    for (size_t i = 0; i < a.items->size() && i < b.items->size(); ++i) {
      const Value &x = (*a.items)[i], &y = (*b.items)[i];
      if (equals(x, y))
        continue;
      return lessThan(x, y);
    }
    return a.items->size() < b.items->size();
  }
  return renderError("`<` is not defined between " + a.typeName() + " and " +
                     b.typeName());
}

llvm::Expected<bool> tmpl::contains(const Value &container, const Value &item) {
  switch (container.kind) {
  case Kind::Undefined:
    return false;
  case Kind::String:
    if (!item.is(Kind::String))
      return renderError("`in <string>` needs a string on the left, not " +
                         item.typeName());
    return container.text.find(item.text) != std::string::npos;
  case Kind::List:
    return llvm::any_of(*container.items,
                        [&](const Value &v) { return equals(v, item); });
  case Kind::Dict:
    return item.is(Kind::String) && container.map->find(item.text);
  default:
    return renderError(container.typeWithArticle() +
                       " cannot be searched with `in`");
  }
}

llvm::Expected<std::vector<Value>> tmpl::iterate(const Value &value) {
  switch (value.kind) {
  case Kind::Undefined:
    return std::vector<Value>{};
  case Kind::List:
    if (value.isIterator()) {
      if (*value.exhausted)
        return std::vector<Value>{};
      *value.exhausted = true;
    }
    return *value.items;
  case Kind::Dict: {
    std::vector<Value> keys;
    for (const auto &entry : value.map->entries)
      keys.push_back(Value::string(entry.first));
    return keys;
  }
  case Kind::String: {
    std::vector<Value> characters;
    std::vector<size_t> offsets = codePointOffsets(value.text);
    for (size_t i = 0; i + 1 < offsets.size(); ++i)
      characters.push_back(Value::string(
          value.text.substr(offsets[i], offsets[i + 1] - offsets[i])));
    return characters;
  }
  default:
    return renderError(value.typeWithArticle() + " cannot be iterated over");
  }
}

llvm::Expected<Value> tmpl::getAttribute(const Value &object,
                                         llvm::StringRef name) {
  if (isMutatingMethod(object, name))
    return renderError("`" + object.typeName() + "." + name +
                       "` changes a value, which transformers' sandbox "
                       "refuses");
  if (auto method = boundMethod(object, name))
    return *method;
  if (object.is(Kind::Dict) || object.is(Kind::Namespace))
    if (const Value *found = object.map->find(name))
      return *found;
  return Value::undefined("`" + object.typeName().str() +
                          "` has no attribute `" + name.str() + "`");
}

llvm::Expected<Value> tmpl::getItem(const Value &object, const Value &key) {
  if ((object.is(Kind::Dict) || object.is(Kind::Namespace)) &&
      key.is(Kind::String)) {
    if (const Value *found = object.map->find(key.text))
      return *found;
    if (object.is(Kind::Dict))
      if (auto method = boundMethod(object, key.text))
        return *method;
  }
  if ((object.is(Kind::List) || object.is(Kind::String)) &&
      (key.is(Kind::Int) || key.is(Kind::Bool))) {
    int64_t index = key.integer;
    if (object.is(Kind::List)) {
      int64_t size = int64_t(object.items->size());
      if (index < 0)
        index += size;
      if (index >= 0 && index < size)
        return (*object.items)[size_t(index)];
    } else {
      std::vector<size_t> offsets = codePointOffsets(object.text);
      int64_t size = int64_t(offsets.size() - 1);
      if (index < 0)
        index += size;
      if (index >= 0 && index < size)
        return Value::string(object.text.substr(
            offsets[index], offsets[index + 1] - offsets[index]));
    }
    return Value::undefined("index " + std::to_string(key.integer) +
                            " is out of range");
  }
  if (object.is(Kind::String) && key.is(Kind::String))
    return getAttribute(object, key.text);
  return Value::undefined("`" + object.typeName().str() + "` has no item " +
                          key.repr());
}

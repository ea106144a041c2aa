//===- JSON.cpp - Reading JSON from outside within fixed limits -----------===//
//
// The nesting is measured by one pass over the text that skips strings, so
// the recursive parser only ever sees documents it can finish.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/JSON.h"

#include "llvm/ADT/Twine.h"

using namespace linnet;

namespace {

/// `[line:column, byte=offset]: message` for the byte at `offset`.
llvm::Error errorAt(llvm::StringRef text, size_t offset,
                    const llvm::Twine &message) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return llvm::createStringError(
      "[" + llvm::Twine(line) + ":" + llvm::Twine(column) +
      ", byte=" + llvm::Twine(offset) + "]: " + message);
}

} // namespace

llvm::Expected<llvm::json::Value> linnet::parseJSON(llvm::StringRef text) {
  if (text.size() > kMaxJSONBytes)
    return llvm::createStringError(
        "the document has " + llvm::Twine(text.size()) +
        " bytes, more than linnet reads (" + llvm::Twine(kMaxJSONBytes) + ")");
  unsigned depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJSONDepth)
        return errorAt(text, i,
                       "arrays and objects nested more than " +
                           llvm::Twine(kMaxJSONDepth) +
                           " levels deep, more than linnet reads");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

std::optional<int64_t> linnet::jsonInteger(const llvm::json::Value &value) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return std::nullopt;
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(*number < kTwoTo63 && *number >= -kTwoTo63))
    return std::nullopt;
  return value.getAsInteger();
}

std::optional<int64_t> linnet::jsonInteger(const llvm::json::Object &object,
                                           llvm::StringRef key) {
  const llvm::json::Value *value = object.get(key);
  return value ? jsonInteger(*value) : std::nullopt;
}

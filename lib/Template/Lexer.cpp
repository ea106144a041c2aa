//===- Lexer.cpp - Jinja's lexer with transformers' whitespace options ----===//
//
// Follows jinja2 3.1's lexer rule for rule, because whitespace is where two
// renderings of one template differ: `{%-`/`{{-` strip the text before,
// `-%}`/`-}}` the whitespace after; otherwise a block tag or a comment
// removes one newline after it (trim_blocks) and the spaces and tabs before
// it on its line (lstrip_blocks, unless `{%+`). Inside a tag, the end marker
// counts only outside brackets, so `{{ {'a': {'b': 1}} }}` is one tag.
//
//===----------------------------------------------------------------------===//

#include "linnet/Template/Lexer.h"

#include "linnet/Basic/UTF8.h"

#include "linnet/Template/Unicode.h"

#include "llvm/ADT/StringExtras.h"

using namespace linnet;
using namespace linnet::tmpl;

llvm::Error tmpl::templateError(ErrorId id, llvm::StringRef fileName,
                                Location location, const llvm::Twine &message) {
  return makeError(id, fileName + ":" + llvm::Twine(location.line) + ":" +
                           llvm::Twine(location.column) + ": " + message);
}

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

class TemplateLexer {
public:
  TemplateLexer(std::string source, llvm::StringRef fileName)
      : source(std::move(source)), fileName(fileName) {}

  llvm::Expected<std::vector<Token>> run();

private:
  std::string source;
  llvm::StringRef fileName;
  size_t pos = 0;
  std::vector<Token> tokens;
  bool lineStarting = true;

  // Offsets are asked for mostly in increasing order: count from the last.
  mutable size_t countedTo = 0;
  mutable Location counted;
  Location locationOf(size_t offset) const {
    if (offset < countedTo) {
      countedTo = 0;
      counted = Location();
    }
    for (; countedTo < offset && countedTo < source.size(); ++countedTo) {
      if (source[countedTo] == '\n') {
        ++counted.line;
        counted.column = 1;
      } else {
        ++counted.column;
      }
    }
    return counted;
  }
  llvm::Error error(size_t offset, const llvm::Twine &message) const {
    return templateError(ErrorId::TemplateMalformed, fileName,
                         locationOf(offset), message);
  }
  void emit(Token::Kind kind, std::string text, size_t offset) {
    tokens.push_back({kind, std::move(text), locationOf(offset)});
  }
  void skipSpaces() {
    while (pos < source.size() && isSpace(source[pos]))
      ++pos;
  }
  llvm::StringRef rest() const { return llvm::StringRef(source).substr(pos); }

  llvm::Error lexText(size_t tagStart, char tagKind, char modifier,
                      size_t textStart);
  llvm::Error lexComment(size_t tagStart, size_t bodyStart);
  llvm::Error lexTag(size_t tagStart, bool block);
  llvm::Error lexString(size_t start);
  void lexNumber();
};

llvm::Error TemplateLexer::lexText(size_t tagStart, char tagKind, char modifier,
                                   size_t textStart) {
  std::string text = source.substr(textStart, tagStart - textStart);
  if (modifier == '-') {
    while (!text.empty() && isSpace(text.back()))
      text.pop_back();
  } else if (modifier != '+' && tagKind != '{') {
    // lstrip_blocks: the tag's line up to it is only spaces and tabs.
    size_t lineStart = text.rfind('\n');
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    if ((lineStart > 0 || lineStarting) && lineStart < text.size() &&
        llvm::all_of(llvm::StringRef(text).substr(lineStart), isSpace))
      text.resize(lineStart);
  }
  if (!text.empty())
    emit(Token::Kind::Text, std::move(text), textStart);
  return llvm::Error::success();
}

llvm::Error TemplateLexer::lexComment(size_t tagStart, size_t bodyStart) {
  size_t end = source.find("#}", bodyStart);
  if (end == std::string::npos)
    return error(tagStart, "the comment opened here is not closed by `#}`");
  char modifier = end > bodyStart ? source[end - 1] : 0;
  pos = end + 2;
  if (modifier == '-') {
    skipSpaces();
    lineStarting = pos > 0 && source[pos - 1] == '\n';
  } else if (modifier == '+') {
    lineStarting = false;
  } else if (pos < source.size() && source[pos] == '\n') {
    ++pos;
    lineStarting = true;
  } else {
    lineStarting = false;
  }
  return llvm::Error::success();
}

llvm::Error TemplateLexer::lexString(size_t start) {
  char quote = source[pos++];
  std::string value;
  while (true) {
    if (pos >= source.size())
      return error(start, "the string opened here is not closed");
    char c = source[pos++];
    if (c == quote)
      break;
    if (c != '\\') {
      value += c;
      continue;
    }
    if (pos >= source.size())
      return error(start, "the string opened here is not closed");
    char e = source[pos++];
    auto hex = [&](unsigned digits) -> llvm::Error {
      uint32_t code = 0;
      for (unsigned i = 0; i < digits; ++i) {
        if (pos >= source.size() || !llvm::isHexDigit(source[pos]))
          return error(pos - 2 - i, "a `\\" + llvm::Twine(e) +
                                        "` escape needs " +
                                        llvm::Twine(digits) + " hex digits");
        code = code * 16 + llvm::hexDigitValue(source[pos++]);
      }
      if (code > 0x10FFFF)
        return error(pos - digits - 2, "the escape names no Unicode character");
      appendCodePoint(code, value);
      return llvm::Error::success();
    };
    switch (e) {
    case '\n':
      break;
    case '\\':
    case '\'':
    case '"':
      value += e;
      break;
    case 'n':
      value += '\n';
      break;
    case 't':
      value += '\t';
      break;
    case 'r':
      value += '\r';
      break;
    case 'a':
      value += '\a';
      break;
    case 'b':
      value += '\b';
      break;
    case 'f':
      value += '\f';
      break;
    case 'v':
      value += '\v';
      break;
    case 'x':
      if (auto err = hex(2))
        return err;
      break;
    case 'u':
      if (auto err = hex(4))
        return err;
      break;
    case 'U':
      if (auto err = hex(8))
        return err;
      break;
    default:
      if (e >= '0' && e <= '7') {
        uint32_t code = e - '0';
        for (int i = 0; i < 2 && pos < source.size() && source[pos] >= '0' &&
                        source[pos] <= '7';
             ++i)
          code = code * 8 + (source[pos++] - '0');
        appendCodePoint(code, value);
      } else {
        // Python keeps an unknown escape as it is written.
        value += '\\';
        value += e;
      }
    }
  }
  emit(Token::Kind::String, std::move(value), start);
  return llvm::Error::success();
}

void TemplateLexer::lexNumber() {
  size_t start = pos;
  auto digits = [&] {
    std::string out;
    while (pos < source.size() &&
           (llvm::isDigit(source[pos]) ||
            (source[pos] == '_' && pos + 1 < source.size() &&
             llvm::isDigit(source[pos + 1]))))
      if (source[pos++] != '_')
        out += source[pos - 1];
    return out;
  };
  std::string text = digits();
  bool isFloat = false;
  if (pos + 1 < source.size() && source[pos] == '.' &&
      llvm::isDigit(source[pos + 1])) {
    ++pos;
    text += "." + digits();
    isFloat = true;
  }
  if (pos < source.size() && (source[pos] == 'e' || source[pos] == 'E')) {
    size_t mark = pos++;
    std::string exponent = "e";
    if (pos < source.size() && (source[pos] == '+' || source[pos] == '-'))
      exponent += source[pos++];
    if (pos < source.size() && llvm::isDigit(source[pos])) {
      text += exponent + digits();
      isFloat = true;
    } else {
      pos = mark;
    }
  }
  emit(isFloat ? Token::Kind::Float : Token::Kind::Integer, text, start);
}

llvm::Error TemplateLexer::lexTag(size_t tagStart, bool block) {
  emit(block ? Token::Kind::BlockBegin : Token::Kind::VariableBegin, "",
       tagStart);
  std::vector<std::pair<char, size_t>> brackets;
  while (true) {
    skipSpaces();
    if (pos >= source.size())
      return error(tagStart,
                   llvm::Twine("the tag opened here is not closed by `") +
                       (block ? "%}" : "}}") + "`");
    llvm::StringRef here = rest();
    if (brackets.empty()) {
      llvm::StringRef end = block ? "%}" : "}}";
      if (here.starts_with(("-" + end).str())) {
        emit(block ? Token::Kind::BlockEnd : Token::Kind::VariableEnd, "", pos);
        pos += 3;
        skipSpaces();
        lineStarting = source[pos - 1] == '\n';
        return llvm::Error::success();
      }
      if (block && here.starts_with("+%}")) {
        emit(Token::Kind::BlockEnd, "", pos);
        pos += 3;
        lineStarting = false;
        return llvm::Error::success();
      }
      if (here.starts_with(end)) {
        emit(block ? Token::Kind::BlockEnd : Token::Kind::VariableEnd, "", pos);
        pos += 2;
        lineStarting = false;
        if (block && pos < source.size() && source[pos] == '\n') {
          ++pos;
          lineStarting = true;
        }
        return llvm::Error::success();
      }
    }
    char c = source[pos];
    if (llvm::isDigit(c)) {
      lexNumber();
    } else if (llvm::isAlpha(c) || c == '_') {
      size_t start = pos;
      while (pos < source.size() &&
             (llvm::isAlnum(source[pos]) || source[pos] == '_'))
        ++pos;
      emit(Token::Kind::Name, source.substr(start, pos - start), start);
    } else if (c == '\'' || c == '"') {
      if (auto err = lexString(pos))
        return err;
    } else {
      static const char *const twoCharacter[] = {
          "//", "**", "==", "!=", ">=", "<="};
      std::string op;
      for (const char *candidate : twoCharacter)
        if (here.starts_with(candidate))
          op = candidate;
      if (op.empty() && llvm::StringRef("+-/*%~[](){}><=.:|,;").contains(c))
        op = std::string(1, c);
      if (op.empty())
        return error(pos, "`" + here.take_front(1) +
                              "` is not part of Jinja's syntax");
      if (op == "(" || op == "[" || op == "{") {
        brackets.push_back({op[0], pos});
      } else if (op == ")" || op == "]" || op == "}") {
        char open = op == ")" ? '(' : op == "]" ? '[' : '{';
        if (brackets.empty() || brackets.back().first != open)
          return error(pos,
                       "`" + op + "` closes no `" + llvm::Twine(open) + "`");
        brackets.pop_back();
      }
      emit(Token::Kind::Operator, op, pos);
      pos += op.size();
    }
  }
}

llvm::Expected<std::vector<Token>> TemplateLexer::run() {
  while (pos < source.size()) {
    size_t tag = pos;
    while (true) {
      tag = source.find('{', tag);
      if (tag == std::string::npos || tag + 1 >= source.size() ||
          llvm::StringRef("{%#").contains(source[tag + 1]))
        break;
      ++tag;
    }
    if (tag == std::string::npos || tag + 1 >= source.size()) {
      emit(Token::Kind::Text, source.substr(pos), pos);
      break;
    }
    char kind = source[tag + 1];
    char modifier = tag + 2 < source.size() ? source[tag + 2] : 0;
    if (modifier != '-' && modifier != '+')
      modifier = 0;
    if (auto err = lexText(tag, kind, modifier, pos))
      return std::move(err);
    pos = tag + 2 + (modifier ? 1 : 0);
    llvm::Error err =
        kind == '#' ? lexComment(tag, pos) : lexTag(tag, /*block=*/kind == '%');
    if (err)
      return std::move(err);
  }
  emit(Token::Kind::End, "", source.size());
  return std::move(tokens);
}

} // namespace

llvm::Expected<std::vector<Token>> tmpl::lexTemplate(llvm::StringRef source,
                                                     llvm::StringRef fileName) {
  // transformers reads a template as UTF-8 and fails on anything else.
  if (std::optional<size_t> at = firstInvalidUTF8(source)) {
    Location location;
    for (size_t i = 0; i < *at; ++i) {
      if (source[i] == '\n') {
        ++location.line;
        location.column = 1;
      } else {
        ++location.column;
      }
    }
    return templateError(
        ErrorId::TemplateMalformed, fileName, location,
        "the template is not valid UTF-8: byte " + llvm::Twine(*at) + " (" +
            llvm::utohexstr(static_cast<unsigned char>(source[*at])) +
            " hex) does not begin a well-formed sequence");
  }
  // Jinja reads \r\n and \r as \n and drops one newline at the very end.
  std::string normalized;
  normalized.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      normalized += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n')
        ++i;
    } else {
      normalized += source[i];
    }
  }
  if (!normalized.empty() && normalized.back() == '\n')
    normalized.pop_back();
  return TemplateLexer(std::move(normalized), fileName).run();
}

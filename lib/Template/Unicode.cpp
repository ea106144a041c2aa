//===- Unicode.cpp - Python's character classes through utf8proc ----------===//

#include "linnet/Template/Unicode.h"

#include <utf8proc.h>

using namespace linnet::tmpl;

int32_t linnet::tmpl::decodeCodePoint(llvm::StringRef text, size_t &offset) {
  utf8proc_int32_t codePoint;
  utf8proc_ssize_t length = utf8proc_iterate(
      reinterpret_cast<const utf8proc_uint8_t *>(text.data() + offset),
      utf8proc_ssize_t(text.size() - offset), &codePoint);
  if (length <= 0) {
    ++offset;
    return -1;
  }
  offset += size_t(length);
  return codePoint;
}

void linnet::tmpl::appendCodePoint(uint32_t codePoint, std::string &out) {
  utf8proc_uint8_t buffer[4];
  utf8proc_ssize_t length =
      utf8proc_encode_char(utf8proc_int32_t(codePoint), buffer);
  out.append(reinterpret_cast<const char *>(buffer), size_t(length));
}

std::vector<size_t> linnet::tmpl::codePointOffsets(llvm::StringRef text) {
  std::vector<size_t> offsets;
  for (size_t i = 0; i < text.size();) {
    offsets.push_back(i);
    decodeCodePoint(text, i);
  }
  offsets.push_back(text.size());
  return offsets;
}

bool linnet::tmpl::isPythonSpace(int32_t c) {
  // Python: the characters of bidirectional class WS, B or S, or category Zs.
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85)
    return true;
  if (c < 0x80)
    return false;
  const utf8proc_property_t *property = utf8proc_get_property(c);
  if (property->category == UTF8PROC_CATEGORY_ZS ||
      property->category == UTF8PROC_CATEGORY_ZL ||
      property->category == UTF8PROC_CATEGORY_ZP)
    return true;
  return property->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
         property->bidi_class == UTF8PROC_BIDI_CLASS_B ||
         property->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

bool linnet::tmpl::isPythonPrintable(int32_t c) {
  if (c == ' ')
    return true;
  switch (utf8proc_category(c)) {
  case UTF8PROC_CATEGORY_CC:
  case UTF8PROC_CATEGORY_CF:
  case UTF8PROC_CATEGORY_CS:
  case UTF8PROC_CATEGORY_CO:
  case UTF8PROC_CATEGORY_CN:
  case UTF8PROC_CATEGORY_ZL:
  case UTF8PROC_CATEGORY_ZP:
  case UTF8PROC_CATEGORY_ZS:
    return false;
  default:
    return true;
  }
}

namespace {
template <typename Map> std::string mapCase(llvm::StringRef text, Map map) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    int32_t c = decodeCodePoint(text, i);
    if (c < 0)
      out.append(text.data() + start, i - start);
    else
      appendCodePoint(uint32_t(map(c)), out);
  }
  return out;
}
} // namespace

std::string linnet::tmpl::toUpper(llvm::StringRef text) {
  return mapCase(text, utf8proc_toupper);
}

std::string linnet::tmpl::toLower(llvm::StringRef text) {
  return mapCase(text, utf8proc_tolower);
}

bool linnet::tmpl::isCased(int32_t c) {
  return c >= 0 && (utf8proc_toupper(c) != c || utf8proc_tolower(c) != c ||
                    utf8proc_category(c) == UTF8PROC_CATEGORY_LT);
}

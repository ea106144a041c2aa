//===- Unicode.h - The Unicode facts Python's str methods use ---*- C++ -*-===//
//
// Templates slice, measure, strip and print strings as Python does: by code
// point, with Python's idea of whitespace and of a printable character.
// utf8proc supplies the character database.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEMPLATE_UNICODE_H
#define LINNET_TEMPLATE_UNICODE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linnet::tmpl {

/// The code point at `text[offset]`, moving `offset` past it; -1 (and one
/// byte on) where the bytes are not UTF-8.
int32_t decodeCodePoint(llvm::StringRef text, size_t &offset);
/// `codePoint` as UTF-8, appended to `out`.
void appendCodePoint(uint32_t codePoint, std::string &out);
/// The byte offset of each code point of `text`, then text.size().
std::vector<size_t> codePointOffsets(llvm::StringRef text);
/// str.isspace() for one character.
bool isPythonSpace(int32_t codePoint);
/// str.isprintable() for one character.
bool isPythonPrintable(int32_t codePoint);
/// str.upper(), str.lower() (full case mappings are not applied: utf8proc's
/// simple ones, which agree with Python's for everything but a few
/// ligatures and the German sharp s).
std::string toUpper(llvm::StringRef text);
std::string toLower(llvm::StringRef text);
/// Whether a character is cased, for str.title() and str.capitalize().
bool isCased(int32_t codePoint);

} // namespace linnet::tmpl

#endif // LINNET_TEMPLATE_UNICODE_H

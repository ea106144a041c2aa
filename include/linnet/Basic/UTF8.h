//===- UTF8.h - Checking and repairing UTF-8 from outside -------*- C++ -*-===//
//
// Text from outside (a prompt, a template, a tokenizer's vocabulary) must be
// UTF-8; these say where it is not, and repair it as Python and Rust's
// from_utf8_lossy do, for the tokenizer and the chat templates alike.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_UTF8_H
#define LINNET_BASIC_UTF8_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace linnet {

/// Whether `text` is valid UTF-8; if not, the offset of the first byte of
/// the first ill-formed sequence.
std::optional<size_t> firstInvalidUTF8(llvm::StringRef text);

/// `bytes` with each ill-formed UTF-8 sequence replaced by U+FFFD, one per
/// maximal ill-formed subpart (as Rust's from_utf8_lossy and Python do).
std::string replaceInvalidUTF8(llvm::StringRef bytes);

} // namespace linnet

#endif // LINNET_BASIC_UTF8_H

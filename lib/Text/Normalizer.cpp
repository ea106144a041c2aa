//===- Normalizer.cpp - Unicode normalization forms, through utf8proc -----===//

#include "linnet/Text/Normalizer.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

using namespace linnet;

std::optional<NormalForm> linnet::normalFormNamed(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<NormalForm>>(name)
      .Case("NFC", NormalForm::NFC)
      .Case("NFD", NormalForm::NFD)
      .Case("NFKC", NormalForm::NFKC)
      .Case("NFKD", NormalForm::NFKD)
      .Default(std::nullopt);
}

llvm::Expected<std::string> Normalizer::apply(llvm::StringRef text) const {
  std::string current = text.str();
  if (llvm::all_of(text, [](char c) { return (unsigned char)c < 0x80; }))
    return current;
  for (NormalForm form : forms) {
    int options = UTF8PROC_STABLE;
    switch (form) {
    case NormalForm::NFC:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalForm::NFD:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalForm::NFKC:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormalForm::NFKD:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
    }
    utf8proc_uint8_t *mapped = nullptr;
    utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(current.data()),
                     static_cast<utf8proc_ssize_t>(current.size()), &mapped,
                     static_cast<utf8proc_option_t>(options));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped,
                                                                  &std::free);
    if (length < 0)
      return makeError(length == UTF8PROC_ERROR_NOMEM ? ErrorId::OutOfMemory
                                                      : ErrorId::TextInvalid,
                       std::string("cannot normalize the text: ") +
                           utf8proc_errmsg(length));
    current.assign(reinterpret_cast<const char *>(mapped), length);
  }
  return current;
}

//===- UTF8.cpp - Checking and repairing UTF-8 from outside ---------------===//

#include "linnet/Basic/UTF8.h"

#include "llvm/Support/ConvertUTF.h"

std::optional<size_t> linnet::firstInvalidUTF8(llvm::StringRef text) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  const auto *cursor = begin;
  if (llvm::isLegalUTF8String(&cursor,
                              reinterpret_cast<const llvm::UTF8 *>(text.end())))
    return std::nullopt;
  return size_t(cursor - begin);
}

std::string linnet::replaceInvalidUTF8(llvm::StringRef bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    auto at = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
    unsigned char lead = at(i);
    if (lead < 0x80) {
      out += char(lead);
      ++i;
      continue;
    }
    // The maximal subpart (Unicode 3.9, U+FFFD substitution): the lead byte
    // and each continuation byte allowed in its place.
    size_t need = lead >= 0xC2 && lead <= 0xDF   ? 1
                  : lead >= 0xE0 && lead <= 0xEF ? 2
                  : lead >= 0xF0 && lead <= 0xF4 ? 3
                                                 : 0;
    size_t taken = 1;
    while (taken <= need && i + taken < bytes.size()) {
      unsigned char c = at(i + taken);
      unsigned char low = 0x80, high = 0xBF;
      if (taken == 1) {
        if (lead == 0xE0)
          low = 0xA0;
        else if (lead == 0xED)
          high = 0x9F;
        else if (lead == 0xF0)
          low = 0x90;
        else if (lead == 0xF4)
          high = 0x8F;
      }
      if (c < low || c > high)
        break;
      ++taken;
    }
    if (need > 0 && taken == need + 1)
      out.append(bytes.data() + i, taken);
    else
      out += "\xEF\xBF\xBD";
    i += taken;
  }
  return out;
}

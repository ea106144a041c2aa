//===- StopStrings.cpp - Ending generated text at a stop string -----------===//

#include "linnet/Text/StopStrings.h"

#include <algorithm>

using namespace linnet;

std::string StopStringMatcher::push(llvm::StringRef text) {
  if (done)
    return {};
  pending += text;
  // The earliest stop string in the text so far ends it.
  size_t first = std::string::npos;
  for (const std::string &stop : stops) {
    size_t at = pending.find(stop);
    if (at < first) {
      first = at;
      match = stop;
    }
  }
  if (first != std::string::npos) {
    done = true;
    std::string out = pending.substr(0, first);
    pending.clear();
    return out;
  }
  // Hold back the longest tail that is the start of some stop string.
  size_t held = 0;
  for (const std::string &stop : stops)
    for (size_t length = std::min(stop.size() - 1, pending.size());
         length > held; --length)
      if (llvm::StringRef(pending).ends_with(
              llvm::StringRef(stop).take_front(length))) {
        held = length;
        break;
      }
  std::string out = pending.substr(0, pending.size() - held);
  pending.erase(0, pending.size() - held);
  return out;
}

std::string StopStringMatcher::finish() {
  if (done)
    return {};
  std::string out = std::move(pending);
  pending.clear();
  return out;
}

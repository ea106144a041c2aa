//===- StopStrings.h - Ending generated text at a stop string ---*- C++ -*-===//
//
// A stop string may arrive split over several tokens, so the text that
// could be the start of one is held back until the next token says whether
// it is: what is printed never contains a stop string, nor anything after
// the first one.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TEXT_STOPSTRINGS_H
#define LINNET_TEXT_STOPSTRINGS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace linnet {

class StopStringMatcher {
public:
  /// Every string must be non-empty.
  explicit StopStringMatcher(std::vector<std::string> stops)
      : stops(std::move(stops)) {}

  /// Takes the next piece of generated text and returns what can be
  /// printed now: up to the first stop string (then stopped() is true and
  /// every later piece gives nothing), less a tail that may begin one.
  std::string push(llvm::StringRef text);
  /// The tail held back, once generation ends without a stop string.
  std::string finish();
  bool stopped() const { return done; }
  /// The stop string that ended the text, when stopped().
  llvm::StringRef matched() const { return match; }

private:
  std::vector<std::string> stops;
  std::string pending;
  std::string match;
  bool done = false;
};

} // namespace linnet

#endif // LINNET_TEXT_STOPSTRINGS_H

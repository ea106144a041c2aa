//===- ProgressBar.h - A long step's progress on standard error --*- C++
//-*-===//
//
// Writing a checkpoint or loading 70 GB of weights takes minutes; a user at a
// terminal sees `drawing the weights [#####     ]  48% of 2.1 GB` redrawn in
// place. Nothing is written when standard error is not a terminal (a log,
// a test), so output stays the same whatever the speed.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_BASIC_PROGRESSBAR_H
#define LINNET_BASIC_PROGRESSBAR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace linnet {

class ProgressBar {
public:
  /// `what` of `total` bytes; shown on standard error if it is a terminal.
  ProgressBar(llvm::StringRef what, uint64_t total);
  /// `bytes` more are done; the bar is redrawn when its percent changes.
  void advance(uint64_t bytes);

private:
  std::string what;
  uint64_t total, done = 0;
  unsigned lastPercent = ~0u;
  bool shown;
};

} // namespace linnet

#endif // LINNET_BASIC_PROGRESSBAR_H

//===- ProgressBar.cpp - A long step's progress on standard error ---------===//

#include "linnet/Basic/ProgressBar.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace linnet;

ProgressBar::ProgressBar(llvm::StringRef what, uint64_t total)
    : what(what.str()), total(total),
      shown(llvm::sys::Process::StandardErrIsDisplayed()) {}

void ProgressBar::advance(uint64_t bytes) {
  done += bytes;
  unsigned percent = total ? unsigned(done * 100 / total) : 100;
  if (!shown || percent == lastPercent)
    return;
  lastPercent = percent;
  std::string bar(percent / 5, '#');
  bar.resize(20, ' ');
  llvm::errs() << llvm::format("\r%s [%s] %3u%% of %.1f GB", what.c_str(),
                               bar.c_str(), percent, double(total) / 1e9);
  if (done >= total)
    llvm::errs() << "\n";
}

//===- RunCommand.cpp - `linnet run` ---------------------------------===//
//
// Run an entry of a model on a checkpoint.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

using namespace linnet;
using namespace linnet::driver;

llvm::cl::SubCommand
    linnet::driver::runCommand("run",
                               "Run an entry of a model on a checkpoint");

int linnet::driver::runRun(const char *argv0) {
  return reportError("`run` is not implemented yet");
}

//===- EmitCommand.cpp - `linnet emit` ---------------------------------===//
//
// Print the MLIR of a model at one stage of lowering.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

using namespace linnet;
using namespace linnet::driver;

llvm::cl::SubCommand linnet::driver::emitCommand(
    "emit", "Print the MLIR of a model at one stage of lowering");

int linnet::driver::runEmit(const char *argv0) {
  return reportError("`emit` is not implemented yet");
}

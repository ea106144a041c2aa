//===- InitCheckpointCommand.cpp - `linnet init-checkpoint`
//---------------------------------===//
//
// Write a random checkpoint for a model.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

using namespace linnet;
using namespace linnet::driver;

llvm::cl::SubCommand linnet::driver::initCheckpointCommand(
    "init-checkpoint", "Write a random checkpoint for a model");

int linnet::driver::runInitCheckpoint(const char *argv0) {
  return reportError("`init-checkpoint` is not implemented yet");
}

//===- Driver.h - What the driver's commands share ---------------*- C++
//-*-===//
//
// Every subcommand of `linnet` lives in a file of its own with its own
// options (LLVM's cl::SubCommand); this header is what they share: loading
// and checking a model's sources, and the entry point of each command.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TOOLS_LINNET_DRIVER_H
#define LINNET_TOOLS_LINNET_DRIVER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Program.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

#include <string>
#include <vector>

namespace linnet::driver {

/// The standard library and model library: next to the sources in a build
/// tree, or under share/linnet in an installation.
std::vector<std::string> defaultRoots(const char *argv0);

/// The stages every command runs first: load the sources, check the
/// declarations.
struct DriverSession {
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags{sourceMgr, llvm::errs()};
  Program program;

  bool load(const char *argv0, llvm::StringRef input,
            llvm::ArrayRef<std::string> includeDirs);
};

/// `file: error: message` for problems that have no source location (files
/// on disk, checkpoints); returns 1, the exit status.
int reportError(const llvm::Twine &message);

// Commands defined outside linnet.cpp; each returns the exit status.
extern llvm::cl::SubCommand initCheckpointCommand;
int runInitCheckpoint(const char *argv0);
extern llvm::cl::SubCommand emitCommand;
int runEmit(const char *argv0);
extern llvm::cl::SubCommand runCommand;
int runRun(const char *argv0);

} // namespace linnet::driver

#endif // LINNET_TOOLS_LINNET_DRIVER_H

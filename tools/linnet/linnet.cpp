//===- linnet.cpp - The linnet driver --------------------------------------===//
//
// One executable, one subcommand per user task (`inspect` today; `check`,
// `graph`, `emit`, `build` and `run` as their stages land). The driver only
// wires stages together: load modules, check declarations, bind generics,
// print; every message goes through the DiagnosticEngine.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Binding.h"
#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/DeclPrinter.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace linnet;
namespace cl = llvm::cl;

namespace {

cl::SubCommand inspectCommand("inspect",
                              "Print the blocks of a model, and with --bind "
                              "its bound generics, entries and parameters");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<file or folder>"),
                               cl::sub(inspectCommand), cl::Required);
cl::list<std::string> includeDirs("I", cl::desc("Add a module search root"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(inspectCommand));
cl::list<std::string>
    bindings("bind",
             cl::desc("Bind root generics: a config.json, or Name=Value "
                      "(repeatable; later ones override)"),
             cl::value_desc("config.json|Name=Value"), cl::sub(inspectCommand));

cl::opt<bool> listDiagnostics("list-diagnostics",
                              cl::desc("Print every diagnostic ID and exit"),
                              cl::Hidden);

/// The standard library and model library: next to the sources in a build
/// tree, or under share/linnet in an installation.
std::vector<std::string> defaultRoots(const char *argv0) {
  std::vector<std::string> roots;
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&defaultRoots));
  llvm::SmallString<256> prefix(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(prefix); // bin/ -> prefix
  for (const char *library : {"stdlib", "models"}) {
    llvm::SmallString<256> installed(prefix);
    llvm::sys::path::append(installed, "share", "linnet", library);
    if (llvm::sys::fs::is_directory(installed))
      roots.push_back(std::string(installed));
    else
      roots.push_back(std::string(LINNET_SOURCE_DIR) + "/" + library);
  }
  return roots;
}

int runInspect(const char *argv0) {
  llvm::SourceMgr sourceMgr;
  DiagnosticEngine diags(sourceMgr, llvm::errs());
  std::vector<std::string> roots(includeDirs.begin(), includeDirs.end());
  for (std::string &root : defaultRoots(argv0))
    roots.push_back(std::move(root));

  Program program;
  ModuleLoader loader(diags, roots);
  if (!loader.loadInput(inputPath, program))
    return 1;
  loader.resolveImports(program);
  checkDeclarations(program, diags);
  if (diags.hadError())
    return 1;

  std::optional<BoundModel> bound;
  if (!bindings.empty()) {
    bound = bindModel(program, bindings, diags);
    if (!bound)
      return 1;
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  printBlocks(inspectedBlocks(program), os);
  if (bound)
    printBoundModel(*bound, os);
  llvm::outs() << text;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "linnet: the Linnet model compiler\n");
  if (listDiagnostics) {
    for (const char *name : allDiagnosticNames())
      llvm::outs() << name << "\n";
    return 0;
  }
  if (inspectCommand)
    return runInspect(argv[0]);
  llvm::errs() << "linnet: error: no command given; try `linnet --help`\n";
  return 1;
}

//===- Driver.cpp - What the driver's commands share ----------------------===//
//
// Loading a model's sources is the same first step for every command.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Sema/DeclChecker.h"
#include "linnet/Sema/ModuleLoader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace linnet;
using namespace linnet::driver;

std::vector<std::string> linnet::driver::defaultRoots(const char *argv0) {
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

bool DriverSession::load(const char *argv0, llvm::StringRef input,
                         llvm::ArrayRef<std::string> includeDirs) {
  std::vector<std::string> roots(includeDirs.begin(), includeDirs.end());
  for (std::string &root : defaultRoots(argv0))
    roots.push_back(std::move(root));
  ModuleLoader loader(diags, roots);
  if (!loader.loadInput(std::string(input), program))
    return false;
  loader.resolveImports(program);
  checkDeclarations(program, diags);
  return !diags.hadError();
}

int linnet::driver::reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "linnet") << message << "\n";
  return 1;
}

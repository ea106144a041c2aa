//===- ModuleLoader.h - Files to modules, uses to imports ----------*- C++
//-*-===//
//
// Maps module names to files under the search roots, reads and parses each
// module once, follows `use` declarations, and reports unknown modules and
// names and import cycles. The result is a Program whose blocks are not yet
// checked (see DeclChecker.h).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SEMA_MODULELOADER_H
#define LINNET_SEMA_MODULELOADER_H

#include "linnet/Basic/Diagnostics.h"
#include "linnet/Sema/Program.h"

#include <string>
#include <vector>

namespace linnet {

/// The file that holds a folder's own module
/// (`models/qwen3_5_moe/module.linnet` is the module `qwen3_5_moe`).
inline constexpr const char *kFolderModuleFile = "module.linnet";
/// Source files larger than this are refused rather than parsed.
inline constexpr uint64_t kMaxSourceBytes = 64ull << 20;

/// The module `path` names when written in `from`: itself, or for a
/// relative path (`.norm`) the module of that name in `from`'s folder.
std::string moduleNameOf(const ast::ModulePath &path, const ModuleInfo &from);

class ModuleLoader {
public:
  /// `searchRoots` in priority order (the `-I` folders, then the defaults).
  ModuleLoader(DiagnosticEngine &diags, std::vector<std::string> searchRoots)
      : diags(diags), roots(std::move(searchRoots)) {}

  /// Loads a file or every `.linnet` file of a folder, then everything they
  /// import. Returns false when nothing could be loaded.
  bool loadInput(llvm::StringRef path, Program &program);

  /// Loads a module given as text (for the fuzzer and tests): it is named
  /// `name` and may import modules from the search roots.
  ModuleInfo *loadText(llvm::StringRef name, llvm::StringRef text,
                       Program &program);

  /// Reports imports of names a module does not declare, ambiguous imports
  /// and import cycles; call after loading and after blocks are registered.
  void resolveImports(Program &program);

private:
  ModuleInfo *addModule(llvm::StringRef name, llvm::StringRef path,
                        std::unique_ptr<llvm::MemoryBuffer> buffer,
                        Program &program);
  ModuleInfo *loadFile(llvm::StringRef name, llvm::StringRef path,
                       llvm::SMRange requestedAt, Program &program);
  ModuleInfo *findOrLoad(llvm::StringRef name, llvm::SMRange requestedAt,
                         Program &program);
  void loadDependencies(ModuleInfo &module, Program &program);
  /// Refuses `use qwen3_5_moe.norm` in a copy of that model's folder that
  /// has its own norm.linnet: the copy would silently use the original.
  void checkStaysInPackage(const ModuleInfo &module, const ast::UseDecl &use,
                           const ModuleInfo &target);

  DiagnosticEngine &diags;
  std::vector<std::string> roots;
  /// The folder given as the input (its real path) and the module name it
  /// has; empty when the input is a file.
  std::string inputFolder, inputPackage;
};

/// The module name of `path` relative to `root` (`std/nn/linear.linnet` is
/// `std.nn.linear`), or nothing when a part is not an identifier.
std::optional<std::string> moduleNameForPath(llvm::StringRef relativePath);

} // namespace linnet

#endif // LINNET_SEMA_MODULELOADER_H

//===- CompileCache.h - Object code kept between runs, by its LLVM IR -----===//
//
// LLVM's optimization and code generation are most of a model's compile (19
// of the test model's 27 s at O3). The objects of a module are kept in a
// folder under a BLAKE3 hash of all that decides them: the LLVM IR before
// optimization (as bitcode), the CPU and its features, the optimization
// level, the number of parts and LLVM's version; a later compile of the same
// IR reads them back. The entries are LLVM's file cache's (llvm::localCache,
// ThinLTO's), each written to a temporary file and renamed, so processes may
// share a folder; llvm::pruneCache keeps it within a budget.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CPU_COMPILECACHE_H
#define LINNET_TARGET_CPU_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Caching.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet {

class CompileCache {
public:
  /// The folder the environment names: `$LINNET_CACHE_DIR`, else
  /// `$XDG_CACHE_HOME/linnet`, else `$HOME/.cache/linnet`; none where
  /// `LINNET_CACHE_DIR` is `off` (or there is no home).
  static std::optional<std::string> directoryFromEnvironment();

  /// The cache of directoryFromEnvironment(), or null: none is asked for,
  /// or (with `warning` saying why) the folder cannot be used.
  static std::unique_ptr<CompileCache> fromEnvironment(std::string &warning);

  /// The cache in `directory` (made if missing), or why it cannot be used.
  static llvm::Expected<std::unique_ptr<CompileCache>>
  open(llvm::StringRef directory);

  /// The objects of `parts` parts stored under `key`, or none where any part
  /// is missing or is not an object file.
  std::optional<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
  lookup(llvm::StringRef key, unsigned parts);

  /// Stores `objects` under `key`, one entry a part, then prunes the folder
  /// to its budget (4 GiB, entries unused for a week).
  llvm::Error
  store(llvm::StringRef key,
        llvm::ArrayRef<std::unique_ptr<llvm::MemoryBuffer>> objects);

private:
  CompileCache(llvm::FileCache cache, std::string folder)
      : cache(std::move(cache)), folder(std::move(folder)) {}
  llvm::FileCache cache;
  std::string folder;
  /// Where localCache's hits arrive, by part.
  std::shared_ptr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>> hits;
};

} // namespace linnet

#endif // LINNET_TARGET_CPU_COMPILECACHE_H

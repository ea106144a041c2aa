//===- CompileCache.cpp - Object code kept between runs, by its LLVM IR ---===//

#include "linnet/Target/CPU/CompileCache.h"

#include "linnet/Basic/Errors.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/CachePruning.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

namespace linnet {

std::optional<std::string> CompileCache::directoryFromEnvironment() {
  if (std::optional<std::string> named =
          llvm::sys::Process::GetEnv("LINNET_CACHE_DIR")) {
    if (*named == "off")
      return std::nullopt;
    if (!named->empty())
      return *named;
  }
  llvm::SmallString<256> folder;
  if (std::optional<std::string> xdg =
          llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    folder = *xdg;
  else if (!llvm::sys::path::cache_directory(folder))
    return std::nullopt;
  llvm::sys::path::append(folder, "linnet");
  return std::string(folder);
}

std::unique_ptr<CompileCache>
CompileCache::fromEnvironment(std::string &warning) {
  std::optional<std::string> folder = directoryFromEnvironment();
  if (!folder)
    return nullptr;
  llvm::Expected<std::unique_ptr<CompileCache>> cache = open(*folder);
  if (cache)
    return std::move(*cache);
  warning = "the compile cache is off (LINNET_CACHE_DIR names another "
            "folder, or `off`): " +
            llvm::toString(cache.takeError());
  return nullptr;
}

llvm::Expected<std::unique_ptr<CompileCache>>
CompileCache::open(llvm::StringRef directory) {
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return makeError(ErrorId::OutputUnwritable,
                     "cannot create `" + directory + "`: " + ec.message());
  // A hit's buffer arrives through this callback while lookup asks.
  auto found =
      std::make_shared<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>();
  llvm::Expected<llvm::FileCache> cache =
      llvm::localCache("linnet", "linnet-object", directory,
                       [found](size_t part, const llvm::Twine &,
                               std::unique_ptr<llvm::MemoryBuffer> object) {
                         if (found->size() <= part)
                           found->resize(part + 1);
                         (*found)[part] = std::move(object);
                       });
  if (!cache)
    return makeError(ErrorId::OutputUnwritable,
                     "cannot use `" + directory +
                         "`: " + llvm::toString(cache.takeError()));
  auto result = std::unique_ptr<CompileCache>(
      new CompileCache(std::move(*cache), directory.str()));
  result->hits = std::move(found);
  return result;
}

std::optional<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
CompileCache::lookup(llvm::StringRef key, unsigned parts) {
  hits->clear();
  for (unsigned part = 0; part < parts; ++part) {
    llvm::Expected<llvm::AddStreamFn> missing =
        cache(part, (key + "-" + llvm::Twine(part)).str(), "");
    if (!missing) {
      llvm::consumeError(missing.takeError());
      return std::nullopt;
    }
    if (*missing)
      return std::nullopt;
  }
  if (hits->size() != parts)
    return std::nullopt;
  bool valid = true;
  for (auto [part, object] : llvm::enumerate(*hits)) {
    llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> parsed =
        object ? llvm::object::ObjectFile::createObjectFile(*object)
               : llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>>(
                     nullptr);
    if (parsed && *parsed)
      continue;
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    // An entry someone cut short or replaced goes, so that the objects
    // compiled again take its place (localCache's files are `llvmcache-`
    // and the key).
    llvm::SmallString<256> file(folder);
    llvm::sys::path::append(file, "llvmcache-" + key + "-" +
                                      llvm::Twine(unsigned(part)));
    llvm::sys::fs::remove(file);
    valid = false;
  }
  if (!valid)
    return std::nullopt;
  return std::move(*hits);
}

llvm::Error CompileCache::store(
    llvm::StringRef key,
    llvm::ArrayRef<std::unique_ptr<llvm::MemoryBuffer>> objects) {
  for (auto [part, object] : llvm::enumerate(objects)) {
    llvm::Expected<llvm::AddStreamFn> addStream =
        cache(part, (key + "-" + llvm::Twine(part)).str(), "");
    if (!addStream)
      return addStream.takeError();
    if (!*addStream)
      continue; // Stored meanwhile by another process.
    llvm::Expected<std::unique_ptr<llvm::CachedFileStream>> stream =
        (*addStream)(part, "");
    if (!stream)
      return stream.takeError();
    *(*stream)->OS << object->getBuffer();
    if (llvm::Error error = (*stream)->commit())
      return error;
  }
  hits->clear();
  llvm::CachePruningPolicy policy;
  policy.MaxSizeBytes = uint64_t(4) << 30;
  llvm::pruneCache(folder, policy);
  return llvm::Error::success();
}

} // namespace linnet

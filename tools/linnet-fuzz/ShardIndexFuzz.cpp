//===- ShardIndexFuzz.cpp - libFuzzer target for sharded indexes ----------===//
//
// Feeds arbitrary bytes to parseShardIndex, which reads the
// `model.safetensors.index.json` of a sharded checkpoint, and then, as that
// index, to Checkpoint::open on a folder holding three small shards (two
// that split a checkpoint, one repeating a tensor). Every shard the index
// names is joined to the folder and opened, so each must be a plain file
// name: one that could leave the folder (a path, `..`) is a finding, as is
// any crash.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace linnet;

namespace {

/// A temporary checkpoint folder, made once per process.
struct ShardFolder {
  llvm::SmallString<128> folder, index;

  ShardFolder() {
    if (llvm::sys::fs::createUniqueDirectory("linnet-fuzz-index", folder))
      std::abort();
    auto tensor = [](const char *name, float value) {
      TensorData data;
      data.name = name;
      data.shape = {1};
      data.bytes.assign(reinterpret_cast<const char *>(&value), sizeof value);
      return data;
    };
    write("model-00001-of-00002.safetensors",
          writeSafetensors({tensor("a", 1)}, {{"format", "pt"}}));
    write("model-00002-of-00002.safetensors",
          writeSafetensors({tensor("b", 2)}, {}));
    write("repeat.safetensors", writeSafetensors({tensor("a", 3)}, {}));
    index = folder;
    llvm::sys::path::append(index, "model.safetensors.index.json");
  }
  ~ShardFolder() { llvm::sys::fs::remove_directories(folder); }

  void write(llvm::StringRef name, llvm::StringRef bytes) const {
    llvm::SmallString<128> path(folder);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      std::abort();
    os << bytes;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto shards = parseShardIndex(text, "model.safetensors.index.json");
  if (!shards) {
    llvm::consumeError(shards.takeError());
    return 0;
  }
  for (size_t i = 0; i < shards->shards.size(); ++i) {
    llvm::StringRef shard = shards->shards[i];
    if (shard.empty() || shard == "." || shard == ".." || shard.contains('/') ||
        shard.contains('\\'))
      std::abort(); // would name something outside the folder
    if (i > 0 && !(shards->shards[i - 1] < shards->shards[i]))
      std::abort(); // sorted, each once
  }

  static ShardFolder folder;
  folder.write("model.safetensors.index.json", text);
  auto checkpoint = Checkpoint::open(folder.folder);
  if (!checkpoint) {
    llvm::consumeError(checkpoint.takeError());
    return 0;
  }
  for (const TensorView *view : checkpoint->tensors())
    if (checkpoint->find(view->name) != view)
      std::abort();
  return 0;
}

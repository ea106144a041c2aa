//===- Safetensors.h - Reading Hugging Face safetensors files ----*- C++
//-*-===//
//
// Checkpoints arrive as safetensors files: an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range,
// then the data. Files are memory-mapped and every header is validated
// before any tensor is touched (ranges inside the file, no overlaps, sizes
// matching shape and dtype), so a truncated or malicious file is an error
// with a message, never an out-of-bounds read. A sharded checkpoint is read
// through `model.safetensors.index.json`.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_SAFETENSORS_H
#define LINNET_RUNTIME_SAFETENSORS_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace linnet {

/// The element types a safetensors header may name that linnet reads.
enum class TensorDType { BF16, F16, F32, F64, I8, I16, I32, I64, U8, Bool };

/// `BF16` -> TensorDType::BF16; nothing for a dtype linnet does not read.
std::optional<TensorDType> parseTensorDType(llvm::StringRef name);
llvm::StringRef tensorDTypeName(TensorDType dtype);
unsigned tensorDTypeBytes(TensorDType dtype);

/// One tensor of a checkpoint: where its bytes are and what they hold.
struct TensorView {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  llvm::StringRef bytes; ///< inside the mapped file
  std::string file;      ///< for messages

  int64_t elementCount() const;
};

/// One parsed safetensors file, kept mapped for the views into it.
class SafetensorsFile {
public:
  /// Maps and validates a file.
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  open(llvm::StringRef path);
  /// Validates bytes already in memory (named `name` in messages).
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  parse(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef name);

  const std::vector<TensorView> &tensors() const { return views; }
  const std::map<std::string, std::string> &metadata() const { return meta; }

private:
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::vector<TensorView> views;
  std::map<std::string, std::string> meta;
};

/// What a `model.safetensors.index.json` says.
struct ShardIndex {
  /// The shard files its `weight_map` names, sorted and each once; every
  /// one a file name in the index's folder, not a path.
  std::vector<std::string> shards;
  /// Each tensor's shard.
  std::map<std::string, std::string> shardOf;
};

/// Reads an index; `path` names it in messages.
llvm::Expected<ShardIndex> parseShardIndex(llvm::StringRef text,
                                           llvm::StringRef path);

/// A checkpoint folder: `model.safetensors`, or the shards named by
/// `model.safetensors.index.json`.
class Checkpoint {
public:
  static llvm::Expected<Checkpoint> open(llvm::StringRef folder);

  /// What the user should know that is not an error (a model.safetensors
  /// beside an index that does not name it), one line each.
  std::vector<std::string> notes;

  /// The tensor named `name`, or null.
  const TensorView *find(llvm::StringRef name) const;
  /// Every tensor, in the order of the files and their headers.
  std::vector<const TensorView *> tensors() const;

private:
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  llvm::StringMap<const TensorView *> byName;
};

/// A tensor as a safetensors header lists it: the file's data holds each
/// tensor's `bytes` in order.
struct TensorEntry {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// The start of a safetensors file holding `tensors` in order: the 8-byte
/// header length and the JSON header, padded with spaces so that the data
/// that follows starts 8-byte aligned, as other writers produce. Writers
/// that stream the data (`init-checkpoint`) write this, then each tensor.
std::string
safetensorsHeader(const std::vector<TensorEntry> &tensors,
                  const std::map<std::string, std::string> &metadata);

/// Serialises tensors as one safetensors file in memory (for tests).
struct TensorData {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  std::string bytes;
};
std::string
writeSafetensors(const std::vector<TensorData> &tensors,
                 const std::map<std::string, std::string> &metadata);

} // namespace linnet

#endif // LINNET_RUNTIME_SAFETENSORS_H

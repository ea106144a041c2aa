//===- Safetensors.cpp - Validated, memory-mapped safetensors ------------===//
//
// The header is untrusted input: its length, its JSON, every dtype, shape
// and offset are checked (with overflow-safe arithmetic) before a view is
// handed out. Messages name the file and the tensor.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Safetensors.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

using namespace linnet;
namespace json = llvm::json;

/// Headers are small (a few hundred bytes per tensor); a larger one is
/// corrupt rather than a real checkpoint.
static constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

std::optional<TensorDType> linnet::parseTensorDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<TensorDType>>(name)
      .Case("BF16", TensorDType::BF16)
      .Case("F16", TensorDType::F16)
      .Case("F32", TensorDType::F32)
      .Case("F64", TensorDType::F64)
      .Case("I8", TensorDType::I8)
      .Case("I16", TensorDType::I16)
      .Case("I32", TensorDType::I32)
      .Case("I64", TensorDType::I64)
      .Case("U8", TensorDType::U8)
      .Case("BOOL", TensorDType::Bool)
      .Default(std::nullopt);
}

llvm::StringRef linnet::tensorDTypeName(TensorDType dtype) {
  switch (dtype) {
  case TensorDType::BF16:
    return "BF16";
  case TensorDType::F16:
    return "F16";
  case TensorDType::F32:
    return "F32";
  case TensorDType::F64:
    return "F64";
  case TensorDType::I8:
    return "I8";
  case TensorDType::I16:
    return "I16";
  case TensorDType::I32:
    return "I32";
  case TensorDType::I64:
    return "I64";
  case TensorDType::U8:
    return "U8";
  case TensorDType::Bool:
    return "BOOL";
  }
  return "";
}

unsigned linnet::tensorDTypeBytes(TensorDType dtype) {
  switch (dtype) {
  case TensorDType::I8:
  case TensorDType::U8:
  case TensorDType::Bool:
    return 1;
  case TensorDType::BF16:
  case TensorDType::F16:
  case TensorDType::I16:
    return 2;
  case TensorDType::F32:
  case TensorDType::I32:
    return 4;
  case TensorDType::F64:
  case TensorDType::I64:
    return 8;
  }
  return 0;
}

int64_t TensorView::elementCount() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim; // validated not to overflow when parsed
  return count;
}

static llvm::Error fail(llvm::StringRef file, const llvm::Twine &message,
                        ErrorId id = ErrorId::SafetensorsMalformed) {
  return makeError(id, "`" + file + "`: " + message);
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::open(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path, "cannot read: " + buffer.getError().message());
  return parse(std::move(*buffer), path);
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::parse(std::unique_ptr<llvm::MemoryBuffer> buffer,
                       llvm::StringRef name) {
  llvm::StringRef bytes = buffer->getBuffer();
  if (bytes.size() < 8)
    return fail(name, "truncated: " + llvm::Twine(bytes.size()) +
                          " bytes, fewer than the 8-byte header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | uint8_t(bytes[i]);
  if (headerBytes > kMaxHeaderBytes || headerBytes > bytes.size() - 8)
    return fail(name, "the header claims " + llvm::Twine(headerBytes) +
                          " bytes but the file has " +
                          llvm::Twine(bytes.size() - 8) + " after its length");
  llvm::StringRef header = bytes.substr(8, headerBytes);
  llvm::StringRef data = bytes.substr(8 + headerBytes);

  auto parsed = parseJSON(header);
  if (!parsed)
    return fail(name, "the header is not valid JSON: " +
                          llvm::toString(parsed.takeError()));
  const json::Object *object = parsed->getAsObject();
  if (!object)
    return fail(name, "the header is not a JSON object");

  auto file = std::unique_ptr<SafetensorsFile>(new SafetensorsFile());
  for (const auto &[key, value] : *object) {
    llvm::StringRef tensorName = key;
    if (tensorName == "__metadata__") {
      const json::Object *meta = value.getAsObject();
      if (!meta)
        return fail(name, "`__metadata__` is not an object");
      for (const auto &[metaKey, metaValue] : *meta) {
        auto text = metaValue.getAsString();
        if (!text)
          return fail(name, "metadata `" + metaKey.str() + "` is not a string");
        file->meta[metaKey.str()] = text->str();
      }
      continue;
    }
    const json::Object *entry = value.getAsObject();
    auto where = [&](const llvm::Twine &what) {
      return fail(name, "tensor `" + tensorName + "`: " + what);
    };
    if (!entry)
      return where("its entry is not an object");
    auto dtypeName = entry->getString("dtype");
    const json::Array *shape = entry->getArray("shape");
    const json::Array *offsets = entry->getArray("data_offsets");
    if (!dtypeName || !shape || !offsets)
      return where("needs `dtype`, `shape` and `data_offsets`");
    auto dtype = parseTensorDType(*dtypeName);
    if (!dtype)
      return where("unknown dtype `" + *dtypeName + "`");

    TensorView view;
    view.name = tensorName.str();
    view.dtype = *dtype;
    view.file = name.str();
    // The running product is checked at every step (as elementCount
    // computes it), so that a zero after huge sizes cannot hide an overflow.
    int64_t elements = 1;
    for (const json::Value &dim : *shape) {
      auto size = jsonInteger(dim);
      if (!size || *size < 0)
        return where("the shape holds something other than sizes");
      if (__builtin_mul_overflow(elements, *size, &elements))
        return where("the shape's element count overflows");
      view.shape.push_back(*size);
    }
    if (offsets->size() != 2)
      return where("`data_offsets` is not a pair");
    auto begin = jsonInteger((*offsets)[0]);
    auto end = jsonInteger((*offsets)[1]);
    if (!begin || !end || *begin < 0 || *end < *begin)
      return where("`data_offsets` is not an ordered pair of offsets");
    if (uint64_t(*end) > data.size())
      return where("its data [" + llvm::Twine(*begin) + ", " +
                   llvm::Twine(*end) + ") runs past the end of the data (" +
                   llvm::Twine(data.size()) + " bytes)");
    uint64_t expected;
    if (__builtin_mul_overflow(uint64_t(elements),
                               uint64_t(tensorDTypeBytes(*dtype)), &expected) ||
        expected != uint64_t(*end - *begin))
      return where("holds " + llvm::Twine(*end - *begin) +
                   " bytes, but its shape and dtype need " +
                   llvm::Twine(elements) + " x " +
                   llvm::Twine(tensorDTypeBytes(*dtype)));
    view.bytes = data.substr(*begin, *end - *begin);
    file->views.push_back(std::move(view));
  }
  // Two tensors may not share bytes.
  std::vector<const TensorView *> sorted;
  for (const TensorView &view : file->views)
    sorted.push_back(&view);
  std::sort(sorted.begin(), sorted.end(),
            [](auto *a, auto *b) { return a->bytes.data() < b->bytes.data(); });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i]->bytes.data() <
        sorted[i - 1]->bytes.data() + sorted[i - 1]->bytes.size())
      return fail(name, "tensors `" + sorted[i - 1]->name + "` and `" +
                            sorted[i]->name + "` overlap");
  file->buffer = std::move(buffer);
  return file;
}

llvm::Expected<ShardIndex> linnet::parseShardIndex(llvm::StringRef text,
                                                   llvm::StringRef path) {
  auto parsed = parseJSON(text);
  if (!parsed)
    return fail(path, "not valid JSON: " + llvm::toString(parsed.takeError()),
                ErrorId::ShardIndexMalformed);
  const json::Object *map = parsed->getAsObject()
                                ? parsed->getAsObject()->getObject("weight_map")
                                : nullptr;
  if (!map)
    return fail(path, "no object `weight_map`", ErrorId::ShardIndexMalformed);
  ShardIndex index;
  std::set<std::string> shards;
  for (const auto &[tensor, shard] : *map) {
    auto shardName = shard.getAsString();
    if (!shardName || shardName->empty() || *shardName == "." ||
        *shardName == ".." || shardName->contains('/') ||
        shardName->contains('\\'))
      return fail(path,
                  "tensor `" + tensor.str() +
                      "` names no shard file in the folder",
                  ErrorId::ShardIndexMalformed);
    shards.insert(shardName->str());
    index.shardOf[tensor.str()] = shardName->str();
  }
  index.shards.assign(shards.begin(), shards.end());
  return index;
}

llvm::Expected<Checkpoint> Checkpoint::open(llvm::StringRef folder) {
  Checkpoint checkpoint;
  llvm::SmallString<256> index(folder);
  llvm::sys::path::append(index, "model.safetensors.index.json");
  std::vector<std::string> shards;
  std::optional<ShardIndex> named;
  if (auto buffer = llvm::MemoryBuffer::getFile(index, /*IsText=*/true)) {
    auto parsed = parseShardIndex((*buffer)->getBuffer(), index);
    if (!parsed)
      return parsed.takeError();
    named = std::move(*parsed);
    shards = named->shards;
    // A single-file checkpoint left beside an index is not read: say so,
    // since it may be what the user meant to load.
    llvm::SmallString<256> single(folder);
    llvm::sys::path::append(single, "model.safetensors");
    if (llvm::sys::fs::exists(single) &&
        !llvm::is_contained(shards, "model.safetensors"))
      checkpoint.notes.push_back("`" + std::string(single) +
                                 "` is not read: `" + std::string(index) +
                                 "` names the shards, and not it");
  } else {
    shards.push_back("model.safetensors");
  }
  bool indexed = !(shards.size() == 1 && shards[0] == "model.safetensors" &&
                   !llvm::sys::fs::exists(index));
  for (const std::string &shard : shards) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, shard);
    if (!llvm::sys::fs::exists(path))
      return indexed ? fail(index,
                            "names shard `" + shard +
                                "`, but there is no such file",
                            ErrorId::ShardIndexMalformed)
                     : makeError(ErrorId::CheckpointMissing,
                                 "checkpoint `" + folder +
                                     "` has no `model.safetensors` and no "
                                     "`model.safetensors.index.json`");
    auto file = SafetensorsFile::open(path);
    if (!file)
      return file.takeError();
    checkpoint.files.push_back(std::move(*file));
  }
  for (const auto &file : checkpoint.files)
    for (const TensorView &view : file->tensors()) {
      auto [it, inserted] = checkpoint.byName.try_emplace(view.name, &view);
      if (!inserted)
        return fail(view.file,
                    "tensor `" + view.name + "` is also in `" +
                        it->second->file + "`",
                    ErrorId::ShardIndexMalformed);
    }
  // Each tensor is where the index says: a loader that trusts the index
  // (as Hugging Face's does) would not find it otherwise.
  if (named)
    for (const auto &[tensor, shard] : named->shardOf) {
      auto it = checkpoint.byName.find(tensor);
      if (it == checkpoint.byName.end())
        return fail(index,
                    "names shard `" + shard + "` for tensor `" + tensor +
                        "`, which no shard holds",
                    ErrorId::ShardIndexMalformed);
      if (llvm::sys::path::filename(it->second->file) != shard)
        return fail(index,
                    "names shard `" + shard + "` for tensor `" + tensor +
                        "`, but it is in `" + it->second->file + "`",
                    ErrorId::ShardIndexMalformed);
    }
  return std::move(checkpoint);
}

const TensorView *Checkpoint::find(llvm::StringRef name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

std::vector<const TensorView *> Checkpoint::tensors() const {
  std::vector<const TensorView *> all;
  for (const auto &file : files)
    for (const TensorView &view : file->tensors())
      all.push_back(&view);
  return all;
}

std::string
linnet::safetensorsHeader(const std::vector<TensorEntry> &tensors,
                          const std::map<std::string, std::string> &metadata) {
  json::Object header;
  if (!metadata.empty()) {
    json::Object meta;
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  uint64_t offset = 0;
  for (const TensorEntry &tensor : tensors) {
    json::Array shape;
    for (int64_t dim : tensor.shape)
      shape.push_back(dim);
    header[tensor.name] = json::Object{
        {"dtype", tensorDTypeName(tensor.dtype)},
        {"shape", std::move(shape)},
        {"data_offsets",
         json::Array{int64_t(offset), int64_t(offset + tensor.bytes)}}};
    offset += tensor.bytes;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(header));
  os.flush();
  // Pad with spaces so the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = char(uint64_t(text.size()) >> (8 * i) & 0xFF);
  return out + text;
}

std::string
linnet::writeSafetensors(const std::vector<TensorData> &tensors,
                         const std::map<std::string, std::string> &metadata) {
  std::vector<TensorEntry> entries;
  std::string data;
  for (const TensorData &tensor : tensors) {
    entries.push_back(
        {tensor.name, tensor.dtype, tensor.shape, tensor.bytes.size()});
    data += tensor.bytes;
  }
  return safetensorsHeader(entries, metadata) + data;
}

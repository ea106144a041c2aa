//===- SafetensorsFuzz.cpp - libFuzzer target for safetensors files -------===//
//
// Feeds arbitrary bytes to SafetensorsFile::parse, the validation every
// checkpoint file passes before a tensor is touched: the header length, the
// header's JSON, dtypes, shapes and byte ranges. What it accepts must be
// safe to use, so every view's bytes are read in full and its element count
// is checked against them, as the parameter loader relies on. Any crash,
// sanitizer report or out-of-bounds read here is a bug a malicious
// checkpoint could trigger.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Safetensors.h"

#include <cstdlib>

using namespace linnet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A copy owned by the buffer, so ASan sees reads past the input's end.
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz");
  auto file = SafetensorsFile::parse(std::move(buffer), "fuzz.safetensors");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  uint64_t checksum = 0;
  for (const TensorView &view : (*file)->tensors()) {
    // The loader converts elementCount() elements from `bytes`.
    uint64_t need =
        uint64_t(view.elementCount()) * tensorDTypeBytes(view.dtype);
    if (need != view.bytes.size())
      std::abort();
    for (char byte : view.bytes)
      checksum += uint8_t(byte);
    checksum += tensorDTypeName(view.dtype).size() + view.name.size();
  }
  for (const auto &[key, value] : (*file)->metadata())
    checksum += key.size() + value.size();
  // Keeps the reads from being optimised away.
  volatile uint64_t sink = checksum;
  (void)sink;
  return 0;
}

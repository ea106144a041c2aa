//===- TokenizerFuzz.cpp - libFuzzer target for tokenizer.json and text ---===//
//
// Feeds arbitrary bytes to the tokenizer: the input up to its first NUL is
// a tokenizer.json (an empty one means the seed corpus's small byte-level
// tokenizer, loaded once), the rest a text to encode with it. Encoded ids
// must decode, and decoding them one at a time through a TextStream must
// give what decoding them at once gives; anything else, a crash, a
// sanitizer report or a hang is a bug.
//
//===----------------------------------------------------------------------===//

#include "linnet/Text/Tokenizer.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace linnet;

namespace {

constexpr const char *kSmallTokenizer =
    LINNET_SOURCE_DIR "/test/fuzz/corpus/tokenizer/small_tokenizer.json";

void check(const Tokenizer &tokenizer, llvm::StringRef text) {
  auto ids = tokenizer.encode(text);
  if (!ids) {
    llvm::consumeError(ids.takeError());
    return;
  }
  auto whole = tokenizer.decode(*ids);
  if (!whole) {
    llvm::errs() << "encoded ids do not decode: "
                 << llvm::toString(whole.takeError()) << "\n";
    std::abort();
  }
  TextStream stream(tokenizer);
  std::string streamed;
  for (int32_t id : *ids) {
    auto piece = stream.push(id);
    if (!piece) {
      llvm::errs() << "an encoded id does not stream: "
                   << llvm::toString(piece.takeError()) << "\n";
      std::abort();
    }
    streamed += *piece;
  }
  streamed += stream.finish();
  if (streamed != *whole) {
    llvm::errs() << "streamed decoding differs from decoding at once\n";
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [file, text] = input.split('\0');
  if (file.empty()) {
    static std::optional<Tokenizer> small = [] {
      auto loaded = Tokenizer::load(kSmallTokenizer);
      if (!loaded) {
        llvm::errs() << llvm::toString(loaded.takeError()) << "\n";
        std::abort();
      }
      return std::optional<Tokenizer>(std::move(*loaded));
    }();
    check(*small, text);
    return 0;
  }
  auto tokenizer = Tokenizer::parse(file, "fuzz/tokenizer.json");
  if (!tokenizer) {
    llvm::consumeError(tokenizer.takeError());
    return 0;
  }
  check(*tokenizer, text);
  // Ids the text did not give: any of them, in any order.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 1 < text.size() && ids.size() < 64; i += 2)
    ids.push_back(int32_t(uint8_t(text[i])) |
                  (int32_t(uint8_t(text[i + 1])) << 8));
  if (auto decoded = tokenizer->decode(ids); !decoded)
    llvm::consumeError(decoded.takeError());
  return 0;
}

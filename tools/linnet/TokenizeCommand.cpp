//===- TokenizeCommand.cpp - `linnet tokenize`: text to ids and back ------===//
//
// What a user checking a prompt, the tests and the tokenizer benchmark use:
// a checkpoint's tokenizer.json applied to a text (an argument or a file),
// or its ids decoded. `--stats` says on stderr how long each part took.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Text/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::tokenizeCommand(
    "tokenize", "Encode a text with a checkpoint's tokenizer.json, or decode "
                "ids");

namespace {

cl::opt<std::string> folder(cl::Positional,
                            cl::desc("<checkpoint or tokenizer folder>"),
                            cl::sub(tokenizeCommand), cl::Required);
cl::opt<std::string> text(cl::Positional, cl::desc("[text]"),
                          cl::sub(tokenizeCommand));
cl::opt<std::string> textFile("file", cl::desc("Encode the text in FILE"),
                              cl::value_desc("file"), cl::sub(tokenizeCommand));
cl::opt<std::string>
    decodeIds("decode",
              cl::desc("Decode these ids (`1,2,3` or `1 2 3`) and print the "
                       "text as it is, with no newline added"),
              cl::value_desc("ids"), cl::sub(tokenizeCommand));
cl::opt<std::string>
    decodeFile("decode-file",
               cl::desc("Decode the ids in FILE (as --decode takes them)"),
               cl::value_desc("file"), cl::sub(tokenizeCommand));
cl::opt<bool> stats("stats",
                    cl::desc("Print the bytes, tokens and times to stderr"),
                    cl::sub(tokenizeCommand));

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int linnet::driver::runTokenize(const char *argv0) {
  int given = !text.empty() + !textFile.empty() + !decodeIds.empty() +
              !decodeFile.empty();
  if (given != 1)
    return reportError(ErrorId::OptionInvalid,
                       "tokenize: give one of a text, --file FILE, --decode "
                       "IDS or --decode-file FILE");
  std::string idText = decodeIds;
  if (!decodeFile.empty()) {
    auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(decodeFile);
    if (!buffer)
      return reportError(ErrorId::OptionInvalid,
                         "--decode-file: cannot read `" + decodeFile +
                             "`: " + buffer.getError().message());
    idText = (*buffer)->getBuffer().str();
  }
  auto start = std::chrono::steady_clock::now();
  auto tokenizer = Tokenizer::loadFolder(folder);
  if (!tokenizer)
    return reportError(tokenizer.takeError());
  double loadSeconds = secondsSince(start);

  if (!decodeIds.empty() || !decodeFile.empty()) {
    std::vector<int32_t> ids;
    llvm::SmallVector<llvm::StringRef> words;
    llvm::SplitString(idText, words, ", \t\r\n");
    for (llvm::StringRef word : words) {
      int64_t id;
      if (word.getAsInteger(10, id) || id < INT32_MIN || id > INT32_MAX)
        return reportError(ErrorId::TokenRowsMalformed,
                           "--decode: `" + word.take_front(40) +
                               "` is not a token id");
      ids.push_back(int32_t(id));
    }
    start = std::chrono::steady_clock::now();
    auto decoded = tokenizer->decode(ids);
    if (!decoded)
      return reportError(withContext("--decode: ", decoded.takeError()));
    llvm::outs() << *decoded;
    if (stats)
      llvm::errs() << "tokenize: " << ids.size() << " ids decoded to "
                   << decoded->size() << " bytes in "
                   << llvm::format("%.6f", secondsSince(start))
                   << " s (tokenizer loaded in "
                   << llvm::format("%.3f", loadSeconds) << " s)\n";
    return 0;
  }

  std::string input = text;
  if (!textFile.empty()) {
    auto buffer =
        llvm::MemoryBuffer::getFileOrSTDIN(textFile, /*IsText=*/false, false);
    if (!buffer)
      return reportError(ErrorId::OptionInvalid,
                         "--file: cannot read `" + textFile +
                             "`: " + buffer.getError().message());
    input = (*buffer)->getBuffer().str();
  }
  start = std::chrono::steady_clock::now();
  auto ids = tokenizer->encode(input);
  if (!ids)
    return reportError(
        textFile.empty()
            ? ids.takeError()
            : withContext("--file `" + textFile + "`: ", ids.takeError()));
  double encodeSeconds = secondsSince(start);
  std::string line;
  line.reserve(ids->size() * 7);
  for (size_t i = 0; i < ids->size(); ++i) {
    if (i)
      line += ',';
    line += std::to_string((*ids)[i]);
  }
  llvm::outs() << line << "\n";
  if (stats)
    llvm::errs() << "tokenize: " << input.size() << " bytes encoded to "
                 << ids->size() << " tokens in "
                 << llvm::format("%.6f", encodeSeconds) << " s ("
                 << llvm::format("%.2f", input.size() / 1e6 / encodeSeconds)
                 << " MB/s); tokenizer loaded in "
                 << llvm::format("%.3f", loadSeconds) << " s\n";
  return 0;
}

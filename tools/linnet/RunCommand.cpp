//===- RunCommand.cpp - `linnet run` --------------------------------------===//
//
// Runs a model on a checkpoint, on the CPU: binds the generics from the
// checkpoint's config.json (and `--bind` overrides), validates every
// parameter against the checkpoint, compiles the entries in-process through
// the CPU target and runs them. With `--tokens`, one stateless entry on a
// batch of token rows, writing the logits as a float32 NumPy file (or
// printing each row's top tokens); with `--script` or `--prompt-tokens`,
// the stateful modes of ScriptRunner.cpp.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Target/CPU/CpuExecutable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <numeric>

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::runCommand(
    "run", "Run an entry of a model on a checkpoint, on the CPU");

namespace {

cl::opt<std::string> runInput(cl::Positional, cl::desc("<file or folder>"),
                              cl::sub(runCommand), cl::Required);
cl::list<std::string> runIncludes("I", cl::desc("Add a module search root"),
                                  cl::value_desc("dir"), cl::Prefix,
                                  cl::sub(runCommand));
cl::opt<std::string>
    runCheckpoint("checkpoint",
                  cl::desc("The checkpoint: config.json and safetensors"),
                  cl::value_desc("dir"), cl::sub(runCommand), cl::Required);
cl::list<std::string> runBindings(
    "bind",
    cl::desc("Override generics after the checkpoint's config.json: a "
             "config.json, or Name=Value (repeatable)"),
    cl::value_desc("config.json|Name=Value"), cl::sub(runCommand));
cl::opt<std::string> runEntry("entry",
                              cl::desc("The entry: forward or next_token"),
                              cl::value_desc("name"), cl::init("forward"),
                              cl::sub(runCommand));
cl::opt<std::string>
    runTokens("tokens",
              cl::desc("Token ids: rows separated by `;`, ids by `,`, "
                       "all rows of one length (\"1,2,3;4,5,6\")"),
              cl::value_desc("rows"), cl::sub(runCommand));
cl::opt<std::string>
    runScriptPath("script",
                  cl::desc("Run the entry calls of a JSON script against one "
                           "session; write call_<i>.npy into --out"),
                  cl::value_desc("calls.json"), cl::sub(runCommand));
cl::opt<std::string>
    runPrompt("prompt-tokens",
              cl::desc("Generate greedily from these token ids (\"1,2,3\")"),
              cl::value_desc("ids"), cl::sub(runCommand));
cl::opt<unsigned> runGenerate("generate",
                              cl::desc("How many tokens to generate from "
                                       "--prompt-tokens"),
                              cl::value_desc("N"), cl::sub(runCommand));
cl::opt<std::string> runOutput(
    "out",
    cl::desc("Write the logits as a float32 .npy file (with --script: a "
             "folder for call_<i>.npy)"),
    cl::value_desc("file.npy|dir"), cl::sub(runCommand));
cl::opt<unsigned> runTop("top",
                         cl::desc("Tokens printed per row without "
                                  "--out (default 5)"),
                         cl::init(5), cl::sub(runCommand));
cl::opt<bool> runTimings("timings",
                         cl::desc("Print the time of each step to stderr"),
                         cl::sub(runCommand));

/// Seconds since `start`, for --timings.
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

llvm::Expected<std::vector<std::vector<int32_t>>>
linnet::driver::parseTokenRows(llvm::StringRef option, llvm::StringRef text,
                               int64_t vocab) {
  std::vector<std::vector<int32_t>> rows;
  llvm::SmallVector<llvm::StringRef> rowTexts;
  text.split(rowTexts, ';');
  for (size_t r = 0; r < rowTexts.size(); ++r) {
    llvm::StringRef rowText = rowTexts[r].trim();
    if (rowText.empty())
      return llvm::createStringError(
          option + ": row " + std::to_string(r) +
          " is empty; give rows of token ids like \"1,2,3;4,5,6\"");
    llvm::SmallVector<llvm::StringRef> ids;
    rowText.split(ids, ',');
    std::vector<int32_t> row;
    for (size_t i = 0; i < ids.size(); ++i) {
      int64_t id;
      llvm::StringRef idText = ids[i].trim();
      if (idText.empty())
        return llvm::createStringError(
            option + ": position " + std::to_string(i) + " of row " +
            std::to_string(r) + " is empty; ids are separated by one `,`");
      if (idText.getAsInteger(10, id))
        return llvm::createStringError(
            option + ": `" + idText.str() + "` (row " + std::to_string(r) +
            ", position " + std::to_string(i) + ") is not a token id");
      if (id < 0 || id >= vocab)
        return llvm::createStringError(
            option + ": token id " + std::to_string(id) + " (row " +
            std::to_string(r) + ", position " + std::to_string(i) +
            ") is outside the vocabulary [0, " + std::to_string(vocab) + ")");
      row.push_back(int32_t(id));
    }
    if (!rows.empty() && row.size() != rows.front().size())
      return llvm::createStringError(
          option + ": row " + std::to_string(r) + " has " +
          std::to_string(row.size()) + " tokens but row 0 has " +
          std::to_string(rows.front().size()) +
          "; every row of a batch has the same length");
    rows.push_back(std::move(row));
  }
  return rows;
}

float linnet::driver::elementToFloat(const void *data, ElementType element,
                                     int64_t i) {
  switch (element) {
  case ElementType::F32:
    return static_cast<const float *>(data)[i];
  case ElementType::BF16: {
    uint32_t bits = uint32_t(static_cast<const uint16_t *>(data)[i]) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  default: {
    float value = 0;
    convertFloats(static_cast<const uint16_t *>(data) + i, TensorDType::F16,
                  &value, ElementType::F32, 1);
    return value;
  }
  }
}

llvm::Error linnet::driver::writeNpy(llvm::StringRef path,
                                     llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<float> values) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int64_t size : shape)
    header += std::to_string(size) + ", ";
  if (shape.size() > 1)
    header.erase(header.size() - 1); // `(2, 3)`, but `(3,)`
  else if (!shape.empty())
    header.erase(header.size() - 1);
  header += "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces and a
  // newline to a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError("cannot write `" + path.str() +
                                   "`: " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(reinterpret_cast<const char *>(values.data()),
           values.size() * sizeof(float));
  os.close();
  if (os.has_error())
    return llvm::createStringError("cannot write `" + path.str() + "`");
  return llvm::Error::success();
}

std::unique_ptr<ParameterStore>
linnet::driver::loadCheckpoint(const Program &program, const BoundModel &bound,
                               llvm::StringRef dir) {
  auto loaded = ParameterStore::load(program, bound, dir, llvm::errs());
  if (!loaded) {
    std::string messages;
    llvm::handleAllErrors(loaded.takeError(),
                          [&](const llvm::ErrorInfoBase &error) {
                            messages += "\n  " + error.message();
                          });
    reportError("the checkpoint `" + dir +
                "` does not fit the model:" + messages);
    return nullptr;
  }
  return std::move(*loaded);
}

int linnet::driver::runRun(const char *argv0) {
  auto start = std::chrono::steady_clock::now();
  llvm::SmallString<256> config(runCheckpoint.getValue());
  llvm::sys::path::append(config, "config.json");
  if (!llvm::sys::fs::exists(config))
    return reportError("--checkpoint: `" + std::string(config) +
                       "` does not exist");
  std::vector<std::string> bindArgs = {std::string(config)};
  bindArgs.insert(bindArgs.end(), runBindings.begin(), runBindings.end());

  // One mode: stateless entry on --tokens, a script, or generation.
  if (runTokens.getNumOccurrences() + runScriptPath.getNumOccurrences() +
          runPrompt.getNumOccurrences() !=
      1)
    return reportError("give one of --tokens (a stateless entry), --script "
                       "(entry calls against one session) or --prompt-tokens "
                       "with --generate (greedy generation)");
  if (!runTokens.getNumOccurrences() && runEntry.getNumOccurrences())
    return reportError("--entry goes with --tokens; a script names the entry "
                       "of each call, and generation runs `prefill` and "
                       "`decode`");
  if (runGenerate.getNumOccurrences() && !runPrompt.getNumOccurrences())
    return reportError("--generate needs --prompt-tokens, the ids to start "
                       "from");
  RunInputs inputs{runInput, runIncludes, runCheckpoint, bindArgs, runTimings};
  if (runScriptPath.getNumOccurrences()) {
    if (runOutput.empty())
      return reportError("--script needs --out, the folder for each call's "
                         "logits (call_<i>.npy)");
    return runScript(argv0, inputs, runScriptPath, runOutput);
  }
  if (runPrompt.getNumOccurrences()) {
    if (!runGenerate.getNumOccurrences())
      return reportError("--prompt-tokens needs --generate N, the number of "
                         "tokens to generate");
    if (!runOutput.empty())
      return reportError("--out does not go with --generate, which prints "
                         "the generated ids");
    return runGeneration(argv0, inputs, runPrompt, runGenerate);
  }

  DriverSession session;
  if (!session.load(argv0, runInput, runIncludes))
    return 1;
  // Tokens and the checkpoint are checked once the sizes are bound, before
  // the model is compiled.
  std::vector<std::vector<int32_t>> rows;
  std::unique_ptr<ParameterStore> store;
  double loadSeconds = 0;
  auto checkInputs = [&](const BoundModel &bound) {
    const MemberDecl *member = bound.root->findMember(runEntry);
    const FnDecl *fn = member ? std::get_if<FnDecl>(member) : nullptr;
    if (!fn || !fn->isEntry) {
      reportError("--entry: `" + runEntry + "` is not an entry of `" +
                  bound.root->qualifiedName() +
                  "`; `run` runs `forward` or `next_token`");
      return false;
    }
    if (runEntry != "forward" && runEntry != "next_token") {
      reportError("--entry: `" + runEntry +
                  "` reads and writes the model's state; `--tokens` runs the "
                  "stateless entries `forward` and `next_token`, and "
                  "`--script` runs every entry");
      return false;
    }
    int64_t vocab = 0;
    for (const BoundGeneric &generic : bound.generics)
      if (generic.name == "Vocab")
        vocab = generic.size;
    auto parsed = parseTokenRows("--tokens", runTokens, vocab);
    if (!parsed) {
      reportError(llvm::toString(parsed.takeError()));
      return false;
    }
    rows = std::move(*parsed);
    auto loadStart = std::chrono::steady_clock::now();
    store = loadCheckpoint(session.program, bound, runCheckpoint);
    if (!store)
      return false;
    loadSeconds = secondsSince(loadStart);
    return true;
  };

  CompiledModel compiled;
  if (!compileModel(session, bindArgs, {runEntry}, LoweringStage::LLVM,
                    compiled, checkInputs))
    return 1;
  double compileSeconds = secondsSince(start) - loadSeconds;

  auto jitStart = std::chrono::steady_clock::now();
  auto executable = CpuExecutable::compile(*compiled.module, {});
  if (!executable)
    return reportError("cannot compile the model: " +
                       llvm::toString(executable.takeError()));
  // Code is generated when a symbol is first looked up; do it here so that
  // the run's time is the model's alone.
  if (auto symbol = (*executable)->lookup(runEntry); !symbol)
    return reportError("cannot compile the model: " +
                       llvm::toString(symbol.takeError()));
  double jitSeconds = secondsSince(jitStart);

  // Arguments: every parameter, then the tokens [B, S].
  int64_t batch = int64_t(rows.size()), length = int64_t(rows.front().size());
  std::vector<int32_t> tokens;
  for (const auto &row : rows)
    tokens.insert(tokens.end(), row.begin(), row.end());
  std::vector<MemRefDescriptor> args;
  for (const LoadedParameter &loaded : store->parameters())
    args.push_back(MemRefDescriptor::forData(const_cast<void *>(loaded.data),
                                             loaded.param->shape));
  args.push_back(MemRefDescriptor::forData(tokens.data(), {batch, length}));
  bool forward = runEntry == "forward";
  MemRefDescriptor result = MemRefDescriptor::forResult(forward ? 3 : 2);

  auto runStart = std::chrono::steady_clock::now();
  if (llvm::Error error = (*executable)->invoke(runEntry, result, args))
    return reportError("running `" + runEntry +
                       "` failed: " + llvm::toString(std::move(error)));
  double runSeconds = secondsSince(runStart);

  ElementType element = ElementType::F32;
  for (const BoundGeneric &generic : compiled.bound->generics)
    if (generic.name == "T")
      element = generic.element;
  std::vector<int64_t> shape(result.sizes().begin(), result.sizes().end());
  std::vector<float> logits(size_t(result.numElements()));
  // The result is contiguous in row-major order (identity layout).
  const char *base = static_cast<const char *>(result.data()) +
                     result.offset() * elementTypeBytes(element);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = elementToFloat(base, element, int64_t(i));
  result.freeResult(args);

  if (runTimings)
    llvm::errs() << llvm::format(
        "linnet run: compile %.3f s, load %.3f s, code generation %.3f s, "
        "%s %.3f s (%lld tokens)\n",
        compileSeconds, loadSeconds, jitSeconds, runEntry.c_str(), runSeconds,
        (long long)(batch * length));

  if (!runOutput.empty()) {
    if (llvm::Error error = writeNpy(runOutput, shape, logits))
      return reportError(llvm::toString(std::move(error)));
    return 0;
  }
  // The top tokens of each row's last position.
  int64_t width = shape.back();
  for (int64_t b = 0; b < batch; ++b) {
    const float *row =
        logits.data() + (forward ? ((b + 1) * length - 1) * width : b * width);
    std::vector<int64_t> order(static_cast<size_t>(width));
    std::iota(order.begin(), order.end(), 0);
    size_t top = std::min<size_t>(runTop, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](int64_t x, int64_t y) {
                        return row[x] > row[y] || (row[x] == row[y] && x < y);
                      });
    llvm::outs() << "row " << b << ":";
    for (size_t i = 0; i < top; ++i)
      llvm::outs() << " " << order[i] << " ("
                   << llvm::format("%.4f", row[order[i]]) << ")";
    llvm::outs() << "\n";
  }
  return 0;
}

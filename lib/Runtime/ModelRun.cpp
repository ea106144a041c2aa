//===- ModelRun.cpp - Running a compiled model on a checkpoint ------------===//
//
// The three modes of `linnet run` (and of a built binary) over one calling
// convention: every entry takes the weights (listParameters order), for a
// stateful entry every state (listStates order), then its own arguments as
// memrefs, updates the states in their buffers and returns the logits. The
// descriptors are built here in MLIR's C-interface layout and packed one
// pointer per parameter; who compiled the code does not matter.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/ModelRun.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/JSON.h"
#include "linnet/Basic/OutputFile.h"
#include "linnet/Basic/ProgressBar.h"
#include "linnet/Basic/UTF8.h"
#include "linnet/Runtime/FloatConversion.h"
#include "linnet/Runtime/ParameterStore.h"
#include "linnet/Runtime/RandomWeights.h"
#include "linnet/Text/StopStrings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numeric>

using namespace linnet;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

llvm::Error fail(ErrorId id, const llvm::Twine &message) {
  return makeError(id, message);
}

/// A memref descriptor in the layout of MLIR's C interface: `{basePtr, data,
/// offset, sizes[rank], strides[rank]}`, every field 8 bytes.
struct Descriptor {
  unsigned rank = 0;
  std::vector<int64_t> words;

  static Descriptor forData(void *data, llvm::ArrayRef<int64_t> shape) {
    Descriptor desc = forResult(unsigned(shape.size()));
    int64_t word = int64_t(reinterpret_cast<intptr_t>(data));
    desc.words[0] = desc.words[1] = word;
    int64_t stride = 1;
    for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
      desc.words[size_t(3 + i)] = shape[size_t(i)];
      desc.words[size_t(3 + int64_t(shape.size()) + i)] = stride;
      stride *= shape[size_t(i)];
    }
    return desc;
  }
  static Descriptor forResult(unsigned rank) {
    Descriptor desc;
    desc.rank = rank;
    desc.words.assign(3 + 2 * rank, 0);
    return desc;
  }
  void *basePtr() const { return reinterpret_cast<void *>(intptr_t(words[0])); }
  void *data() const { return reinterpret_cast<void *>(intptr_t(words[1])); }
  int64_t offset() const { return words[2]; }
  llvm::ArrayRef<int64_t> sizes() const {
    return llvm::ArrayRef<int64_t>(words).slice(3, rank);
  }
  llvm::ArrayRef<int64_t> strides() const {
    return llvm::ArrayRef<int64_t>(words).slice(3 + rank, rank);
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t size : sizes())
      n *= size;
    return n;
  }
};

/// A call's inputs (i32 tokens, positions, slots, lengths) moved to a
/// GPU's managed memory for the call, when there is a GPU. The device is
/// idle between calls, so the host writes them directly.
class DeviceInputs {
public:
  explicit DeviceInputs(CudaDevice *device) : device(device) {}
  ~DeviceInputs() {
    for (void *buffer : buffers)
      device->free(buffer);
  }

  llvm::Error place(Descriptor &arg) {
    if (!device)
      return llvm::Error::success();
    uint64_t bytes = uint64_t(arg.numElements()) * sizeof(int32_t);
    void *buffer = device->allocateManaged(bytes);
    if (!buffer)
      return fail(ErrorId::DeviceOutOfMemory,
                  "GPU 0 has no " + formatBytes(bytes) +
                      " left for the call's inputs");
    buffers.push_back(buffer);
    std::memcpy(buffer, arg.data(), bytes);
    arg.words[0] = arg.words[1] = int64_t(reinterpret_cast<intptr_t>(buffer));
    return llvm::Error::success();
  }

private:
  CudaDevice *device;
  std::vector<void *> buffers;
};

/// Calls `name` with memref `args`, filling in `results` (several results
/// come back as one struct of descriptors laid out one after the other).
llvm::Error invoke(const PackedEntryLookup &call, llvm::StringRef name,
                   llvm::MutableArrayRef<Descriptor> results,
                   llvm::MutableArrayRef<Descriptor> args) {
  std::vector<int64_t> resultWords;
  for (Descriptor &result : results)
    llvm::append_range(resultWords, result.words);
  std::vector<void *> pointers;
  pointers.push_back(resultWords.data());
  for (Descriptor &arg : args)
    pointers.push_back(arg.words.data());
  std::vector<void *> packed;
  for (void *&pointer : pointers)
    packed.push_back(&pointer);
  llvm::Expected<PackedEntry> entry = call(name);
  if (!entry)
    return entry.takeError();
  // Results come back even with an error: an index out of range is
  // reported once the code has run to its end (and its buffers must be
  // freed); after an allocation failure they are still the empty ones.
  llvm::Error error = callGeneratedCode(*entry, packed.data());
  size_t position = 0;
  for (Descriptor &result : results) {
    std::copy_n(resultWords.begin() + int64_t(position), result.words.size(),
                result.words.begin());
    position += result.words.size();
  }
  return error;
}

/// Frees the buffers of `results` the callee allocated: a result that is
/// one of the arguments (a state updated in place) is not the callee's to
/// give back; every other buffer is freed once.
void freeResults(llvm::ArrayRef<Descriptor> results,
                 llvm::ArrayRef<Descriptor> args) {
  std::vector<void *> freed;
  for (const Descriptor &arg : args)
    freed.push_back(arg.basePtr());
  for (const Descriptor &r : results) {
    if (!r.basePtr() || llvm::is_contained(freed, r.basePtr()))
      continue;
    freed.push_back(r.basePtr());
    freeGeneratedBuffer(r.basePtr());
  }
}

/// An error for the first row (and position) whose logits are not all
/// finite: a token ranked or chosen from them would mean nothing.
llvm::Error checkFinite(llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<float> logits,
                        llvm::function_ref<bool(int64_t row)> unread) {
  int64_t width = shape.back();
  int64_t positions = shape.size() == 3 ? shape[1] : 1;
  for (size_t start = 0; start < logits.size(); start += size_t(width)) {
    if (unread(int64_t(start) / width / positions))
      continue;
    uint64_t nans = 0, infinities = 0;
    for (float value : logits.slice(start, size_t(width))) {
      nans += std::isnan(value);
      infinities += std::isinf(value);
    }
    if (!nans && !infinities)
      continue;
    int64_t index = int64_t(start) / width;
    std::string where = "row " + std::to_string(index / positions);
    if (shape.size() == 3)
      where += ", position " + std::to_string(index % positions);
    return fail(
        ErrorId::NonFiniteLogits,
        "the logits of " + where + " hold " +
            describeNonFinite(nans, infinities, uint64_t(width)) +
            "; no token is chosen from them (a checkpoint with non-finite "
            "weights? `linnet check --checkpoint` names them)");
  }
  return llvm::Error::success();
}

std::string callPrefix(size_t index, const EntryCall &call) {
  return "call " + std::to_string(index) + " (`" + entryName(call.entry).str() +
         "`), ";
}

/// Checks `calls` in order against the sizes, simulating the counts they
/// leave, and that the model has every entry they use.
llvm::Error checkCalls(llvm::StringRef option, const ModelManifest &manifest,
                       llvm::ArrayRef<EntryCall> calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    llvm::StringRef name = entryName(calls[i].entry);
    if (!manifest.hasEntry(name))
      return fail(ErrorId::EntryUnavailable,
                  option + ": " + callPrefix(i, calls[i]) + "`entry`: `" +
                      manifest.model + "` has no entry `" + name + "`");
  }
  auto sizes = manifest.sizes();
  if (!sizes)
    return withContext(option + ": ", sizes.takeError());
  RowCounts counts(*sizes);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (llvm::Error error = counts.check(calls[i]))
      return withContext(option + ": " + callPrefix(i, calls[i]),
                         std::move(error));
    counts.advance(calls[i]);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::string>
linnet::checkpointConfig(llvm::StringRef checkpoint) {
  llvm::SmallString<256> config(checkpoint);
  llvm::sys::path::append(config, "config.json");
  if (!llvm::sys::fs::exists(config))
    return makeError(ErrorId::CheckpointMissing,
                     "--checkpoint: `" + config + "` does not exist");
  return std::string(config);
}

llvm::Error RunOptions::validate() const {
  auto oneSourceOfWeights = [&]() -> llvm::Error {
    if (checkpoint.empty() != !randomWeights)
      return llvm::Error::success();
    return fail(ErrorId::RunOptionsInvalid,
                checkpoint.empty()
                    ? "give the weights: --checkpoint DIR, or "
                      "--random-weights SEED to draw them"
                    : "--checkpoint and --random-weights are two sources "
                      "of the weights; give one");
  };
  if (serve) {
    if (tokens || script || prompt || promptText || chat || generate ||
        !out.empty() || !transcript.empty() || sampling.any() ||
        !stopStrings.empty() || systemMessage)
      return fail(ErrorId::RunOptionsInvalid,
                  "--serve answers requests, which carry their own prompts "
                  "and sampling; --tokens, --script, --prompt, --chat, "
                  "--generate, --out, --transcript, --stop, --system and the "
                  "sampling options do not go with it");
    if (llvm::Error error = oneSourceOfWeights())
      return error;
    if (randomWeights && tokenizer.empty())
      return fail(ErrorId::RunOptionsInvalid,
                  "--serve with --random-weights needs --tokenizer DIR, a "
                  "folder with the tokenizer.json the requests' text is "
                  "encoded with");
    return llvm::Error::success();
  }
  bool text = promptText || chat;
  if (sampling.any() && !generate)
    return fail(ErrorId::RunOptionsInvalid,
                "the sampling options (--temperature, --top-k, ...) choose "
                "the tokens of --generate; give --generate N");
  if (llvm::Error error = sampling.over(SamplingOptions()).validate())
    return error;
  if (!stopStrings.empty() && !text)
    return fail(ErrorId::RunOptionsInvalid,
                "--stop ends the text of --prompt or --chat; with "
                "--prompt-tokens the output is ids");
  for (size_t i = 0; i < stopStrings.size(); ++i)
    if (stopStrings[i].empty())
      return fail(ErrorId::RunOptionsInvalid,
                  "--stop " + std::to_string(i + 1) +
                      " is empty; give the text that ends generation");
  if (llvm::Error error = oneSourceOfWeights())
    return error;
  if (int(tokens.has_value()) + int(script.has_value()) +
          int(prompt.has_value()) + int(promptText.has_value()) +
          int(chat.has_value()) !=
      1)
    return fail(ErrorId::RunOptionsInvalid,
                "give one of --tokens (a stateless entry), --script "
                "(entry calls against one session), or --prompt-tokens, "
                "--prompt or --chat with --generate (generation)");
  if (!chat && (systemMessage || thinking || !chatTemplate.empty()))
    return fail(ErrorId::RunOptionsInvalid,
                std::string(systemMessage ? "--system"
                            : thinking    ? "--thinking"
                                          : "--chat-template") +
                    " goes with --chat, whose template it is for");
  if (systemMessage && *chat != "-")
    return fail(ErrorId::RunOptionsInvalid,
                "--system starts a conversation on standard input (--chat "
                "-); a chat file holds its own system message");
  if (!tokenizer.empty() && !text)
    return fail(ErrorId::RunOptionsInvalid,
                "--tokenizer goes with --prompt or --chat, the text it "
                "encodes");
  if (!transcript.empty() && !text)
    return fail(ErrorId::RunOptionsInvalid,
                "--transcript records the replies of --prompt or --chat");
  if (text && randomWeights && tokenizer.empty())
    return fail(ErrorId::RunOptionsInvalid,
                std::string(chat ? "--chat" : "--prompt") +
                    " with --random-weights needs --tokenizer DIR, a "
                    "folder with the tokenizer.json to encode it with");
  if (text && !generate)
    return fail(ErrorId::RunOptionsInvalid,
                std::string(chat ? "--chat" : "--prompt") +
                    " needs --generate N, the " +
                    (chat ? "most tokens to generate in a reply"
                          : "number of tokens to generate"));
  if (text && !out.empty())
    return fail(ErrorId::RunOptionsInvalid,
                "--out does not go with --generate, which prints "
                "the generated text");
  if (!tokens && entry)
    return fail(ErrorId::RunOptionsInvalid,
                "--entry goes with --tokens; a script names the entry "
                "of each call, and generation runs `prefill` and "
                "`decode`");
  if (generate && !prompt && !text)
    return fail(ErrorId::RunOptionsInvalid,
                "--generate needs --prompt-tokens, --prompt or --chat, the "
                "ids, the text or the chat to start from");
  if (script && out.empty())
    return fail(ErrorId::RunOptionsInvalid,
                "--script needs --out, the folder for each call's "
                "logits (call_<i>.npy)");
  if (prompt && !generate)
    return fail(ErrorId::RunOptionsInvalid,
                "--prompt-tokens needs --generate N, the number of "
                "tokens to generate");
  if (prompt && !out.empty())
    return fail(ErrorId::RunOptionsInvalid,
                "--out does not go with --generate, which prints "
                "the generated ids");
  return llvm::Error::success();
}

ModelRun::~ModelRun() {
  if (!device)
    return;
  session.reset();
  if (parameterArena)
    device->free(parameterArena);
  CudaDevice::makeCurrent(nullptr);
}

namespace {

/// Where each parameter starts in the device's arena: aligned for any
/// load the kernels make (16-byte vectors; 256 as cudaMalloc aligns).
constexpr uint64_t kArenaAlignment = 256;

/// The bytes of `tensors`, each rounded up to `alignment` (the arena's
/// layout; 1: packed).
uint64_t bytesOf(llvm::ArrayRef<ModelParameter> tensors,
                 uint64_t alignment = 1) {
  uint64_t bytes = 0;
  for (const ModelParameter &tensor : tensors)
    bytes += llvm::alignTo(
        tensor.elementCount() * elementTypeBytes(tensor.element), alignment);
  return bytes;
}

} // namespace

llvm::Expected<std::unique_ptr<ModelRun>>
ModelRun::prepare(const ModelManifest &manifest, const RunOptions &options) {
  std::unique_ptr<ModelRun> run(new ModelRun());
  run->manifest = &manifest;
  run->options = options;
  auto sizes = manifest.sizes();
  if (!sizes)
    return sizes.takeError();

  // The inputs, checked against the sizes before anything is loaded.
  if (options.tokens) {
    std::string entry = options.entry.value_or("forward");
    if (!manifest.hasEntry(entry))
      return fail(ErrorId::EntryUnavailable,
                  "--entry: `" + entry + "` is not an entry of `" +
                      manifest.model +
                      "`; `run` runs `forward` or `next_token`");
    if (entry != "forward" && entry != "next_token")
      return fail(
          ErrorId::EntryUnavailable,
          "--entry: `" + entry +
              "` reads and writes the model's state; `--tokens` runs the "
              "stateless entries `forward` and `next_token`, and "
              "`--script` runs every entry");
    auto rows = parseTokenRows("--tokens", *options.tokens, sizes->vocab);
    if (!rows)
      return rows.takeError();
    EntryCall call;
    call.entry = *entryNamed(entry);
    call.rows = int64_t(rows->size());
    call.length = int64_t(rows->front().size());
    for (const auto &row : *rows)
      call.tokens.insert(call.tokens.end(), row.begin(), row.end());
    run->calls.push_back(std::move(call));
  } else if (options.script) {
    auto buffer = llvm::MemoryBuffer::getFile(*options.script);
    if (!buffer)
      return fail(ErrorId::ScriptUnreadable,
                  "--script: cannot read `" + *options.script +
                      "`: " + buffer.getError().message());
    auto calls = parseScript((*buffer)->getBuffer(), *options.script);
    if (!calls)
      return withContext("--script: ", calls.takeError());
    if (std::error_code ec = llvm::sys::fs::create_directories(options.out))
      return fail(ErrorId::OutputUnwritable,
                  "--out: cannot create the folder `" + options.out +
                      "`: " + ec.message());
    if (llvm::Error error = checkCalls("--script", manifest, *calls))
      return std::move(error);
    run->calls = std::move(*calls);
  } else if (options.serve) {
    if (llvm::Error error = run->prepareServing())
      return std::move(error);
  } else {
    if (llvm::Error error = run->prepareGeneration(*sizes))
      return std::move(error);
  }
  llvm::SetVector<llvm::StringRef> names;
  for (const EntryCall &call : run->calls)
    names.insert(entryName(call.entry));
  if (options.serve) {
    names.insert("prefill_slots");
    names.insert("decode_rows");
  }
  if (options.generate) {
    names.insert("prefill");
    if (*options.generate > 1)
      names.insert("decode");
  }
  run->usedEntries.assign(names.begin(), names.end());

  // The checkpoint: its config first (a built binary), then every tensor.
  if (options.checkConfig && !options.randomWeights)
    if (llvm::Error error = manifest.checkConfigAgrees(
            options.checkpoint, [&](const llvm::Twine &message) {
              llvm::errs() << options.tool << ": warning: " << message << "\n";
            }))
      return std::move(error);
  // The GPU, checked before anything is loaded: its driver, architecture
  // and free memory.
  if (options.gpu) {
    CudaRequirements needs = *options.gpu;
    needs.memory = {
        {"parameters", bytesOf(manifest.parameters, kArenaAlignment)},
        {"states", bytesOf(manifest.states)}};
    auto opened = CudaDevice::open(needs);
    if (!opened)
      return opened.takeError();
    run->device = std::move(*opened);
    CudaDevice::makeCurrent(run->device.get());
  }
  auto loadStart = std::chrono::steady_clock::now();
  if (llvm::Error error =
          options.randomWeights ? run->drawParameters() : run->loadCheckpoint())
    return std::move(error);
  run->loadTime = secondsSince(loadStart);
  if (!options.tokens) {
    StateMemory memory;
    if (CudaDevice *device = run->device.get())
      memory = {
          [device](uint64_t bytes) { return device->allocateManaged(bytes); },
          [device](void *pointer) { device->free(pointer); }};
    auto created = Session::create(*sizes, manifest.states, std::move(memory));
    if (!created)
      return created.takeError();
    run->session = std::move(*created);
  }
  return run;
}

llvm::Expected<void *> ModelRun::placeOnDevice(uint64_t bytes) {
  // One allocation for all of them, made before the first: the free memory
  // was checked against its size when the device was opened.
  if (!parameterArena) {
    uint64_t total = bytesOf(manifest->parameters, kArenaAlignment);
    parameterArena = device->allocateDevice(total);
    if (!parameterArena)
      return fail(ErrorId::DeviceOutOfMemory,
                  "GPU 0 cannot allocate the " + formatBytes(total) +
                      " of the parameters (" +
                      std::to_string(manifest->parameters.size()) +
                      " tensors) in one piece");
  }
  void *copy = static_cast<char *>(parameterArena) + arenaUsed;
  arenaUsed += llvm::alignTo(bytes, kArenaAlignment);
  parameterData.push_back(copy);
  return copy;
}

llvm::Error ModelRun::loadCheckpoint() {
  auto binding = manifest->binding();
  if (!binding)
    return binding.takeError();
  auto loaded = ParameterStore::load(*binding, manifest->parameters,
                                     options.checkpoint, llvm::errs());
  if (!loaded) {
    std::string messages;
    llvm::handleAllErrors(loaded.takeError(),
                          [&](const llvm::ErrorInfoBase &error) {
                            messages += "\n  " + error.message();
                          });
    return llvm::createStringError("the checkpoint `" + options.checkpoint +
                                   "` does not fit the model:" + messages);
  }
  store = std::move(*loaded);
  if (!device) {
    for (const LoadedParameter &parameter : store->parameters())
      parameterData.push_back(const_cast<void *>(parameter.data));
    return llvm::Error::success();
  }
  ProgressBar progress("uploading the weights", bytesOf(manifest->parameters));
  for (const LoadedParameter &parameter : store->parameters()) {
    auto copy = placeOnDevice(parameter.bytes);
    if (!copy)
      return copy.takeError();
    if (llvm::Error error =
            device->copy(*copy, parameter.data, parameter.bytes))
      return error;
    progress.advance(parameter.bytes);
  }
  return device->synchronize();
}

llvm::Error ModelRun::drawParameters() {
  RandomWeights random(*options.randomWeights);
  ProgressBar progress("drawing the weights", bytesOf(manifest->parameters));
  // On a GPU the values pass through this buffer, a slice at a time.
  constexpr uint64_t kStagingBytes = uint64_t(64) << 20;
  std::unique_ptr<uint64_t[]> staging;
  for (const ModelParameter &param : manifest->parameters) {
    unsigned elementBytes = elementTypeBytes(param.element);
    uint64_t count = param.elementCount(), bytes = count * elementBytes;
    if (!device) {
      // Zeros for an optional parameter, as for one a checkpoint lacks;
      // the others are written once, by the draw.
      size_t words = size_t((bytes + 7) / 8);
      auto &buffer = drawnParameters.emplace_back(
          param.optional ? new uint64_t[words]() : new uint64_t[words]);
      if (!param.optional)
        random.fill(param, 0, count, buffer.get());
      parameterData.push_back(buffer.get());
      progress.advance(bytes);
      continue;
    }
    if (!staging)
      staging.reset(new uint64_t[kStagingBytes / 8]);
    auto copy = placeOnDevice(bytes);
    if (!copy)
      return copy.takeError();
    uint64_t slice = kStagingBytes / elementBytes;
    for (uint64_t first = 0; first < count; first += slice) {
      uint64_t values = std::min(slice, count - first);
      if (param.optional)
        std::memset(staging.get(), 0, values * elementBytes);
      else
        random.fill(param, first, values, staging.get());
      // A copy from pageable memory returns once the source has been read,
      // so the buffer can take the next slice.
      if (llvm::Error error =
              device->copy(static_cast<char *>(*copy) + first * elementBytes,
                           staging.get(), values * elementBytes))
        return error;
      progress.advance(values * elementBytes);
    }
  }
  if (device)
    return device->synchronize();
  return llvm::Error::success();
}

llvm::Error ModelRun::callEntry(const PackedEntryLookup &packed,
                                const EntryCall &call,
                                std::vector<int64_t> &shape,
                                std::vector<float> &logits) {
  if (session)
    if (llvm::Error error = session->check(call))
      return error;
  // The logits' size is known before the call: refuse what cannot fit
  // (the generated code's buffer and the runtime's f32 copy) at once.
  if (auto sizes = manifest->sizes()) {
    bool everyPosition = call.entry == EntryKind::Forward;
    uint64_t logitCount = uint64_t(call.rows) *
                          uint64_t(everyPosition ? call.length : 1) *
                          uint64_t(sizes->vocab);
    uint64_t needed =
        logitCount * (elementTypeBytes(manifest->logitElement()) + 4);
    uint64_t available = availableMemoryBytes();
    if (needed > available)
      return fail(
          ErrorId::LogitsTooLarge,
          "the logits of " + std::to_string(call.rows) + " row(s)" +
              (everyPosition ? " of " + std::to_string(call.length) + " tokens"
                             : std::string()) +
              " take " + formatBytes(needed) + " (" +
              std::to_string(logitCount) +
              " values, in the model's element type and as f32), more than "
              "the " +
              formatBytes(available) + " this process can still allocate" +
              (everyPosition ? "; `next_token` gives the last position's only"
                             : ""));
  } else {
    return sizes.takeError();
  }
  std::vector<Descriptor> args;
  for (auto [index, param] : llvm::enumerate(manifest->parameters))
    args.push_back(Descriptor::forData(parameterData[index], param.shape));
  bool stateful = isStateful(call.entry);
  if (stateful)
    for (StateBuffer &state : session->states())
      args.push_back(Descriptor::forData(state.data, state.state.shape));
  std::vector<int32_t> tokens = call.tokens, positions = call.positions,
                       slots = call.slots, lengths = call.lengths;
  int32_t pos = call.pos;
  size_t firstInput = args.size();
  args.push_back(Descriptor::forData(tokens.data(), {call.rows, call.length}));
  switch (call.entry) {
  case EntryKind::Prefill:
  case EntryKind::Decode:
    args.push_back(Descriptor::forData(&pos, {}));
    break;
  case EntryKind::DecodeRows:
    args.push_back(
        Descriptor::forData(positions.data(), {int64_t(positions.size())}));
    break;
  case EntryKind::PrefillSlots:
    args.push_back(Descriptor::forData(slots.data(), {int64_t(slots.size())}));
    args.push_back(
        Descriptor::forData(lengths.data(), {int64_t(lengths.size())}));
    break;
  case EntryKind::Forward:
  case EntryKind::NextToken:
    break;
  }
  // On a GPU the inputs go to memory its kernels (and the host plan) reach.
  DeviceInputs inputs(device.get());
  for (size_t i = firstInput; i < args.size(); ++i)
    if (llvm::Error error = inputs.place(args[i]))
      return error;

  // Entries update the state buffers they are given in place and return
  // the logits only (linnet-codegen-drop-in-place-results).
  std::vector<Descriptor> results = {
      Descriptor::forResult(call.entry == EntryKind::Forward ? 3 : 2)};
  llvm::StringRef name = entryName(call.entry);
  llvm::Error called = invoke(packed, name, results, args);
  if (!called && device)
    called = device->synchronize();
  if (called) {
    freeResults(results, args);
    return called;
  }

  // Logits: contiguous, row-major (identity layout).
  ElementType logitElement = manifest->logitElement();
  const Descriptor &result = results.front();
  shape.assign(result.sizes().begin(), result.sizes().end());
  logits.resize(size_t(result.numElements()));
  const char *base = static_cast<const char *>(result.data()) +
                     result.offset() * elementTypeBytes(logitElement);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = elementToFloat(base, logitElement, int64_t(i));
  // A free row's logits are read by no one (Session::release).
  bool perSlot =
      call.entry == EntryKind::Decode || call.entry == EntryKind::DecodeRows;
  llvm::Error problem = checkFinite(shape, logits, [&](int64_t row) {
    return perSlot && session && session->isFree(row);
  });
  freeResults(results, args);
  if (problem)
    return problem;
  if (session)
    session->finish(call);
  return llvm::Error::success();
}

llvm::Error ModelRun::execute(const PackedEntryLookup &call) {
  if (options.tokens)
    return runTokens(call);
  if (options.script)
    return runScript(call);
  return runGeneration(call);
}

llvm::Error ModelRun::runTokens(const PackedEntryLookup &packed) {
  const EntryCall &call = calls.front();
  std::vector<int64_t> shape;
  std::vector<float> logits;
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error error = callEntry(packed, call, shape, logits))
    return withContext("`" + entryName(call.entry) + "`: ", std::move(error));
  if (options.timings)
    llvm::errs() << llvm::format(
        "%s: load %.3f s, %s %.3f s (%lld tokens)\n", options.tool.c_str(),
        loadTime, entryName(call.entry).data(), secondsSince(start),
        (long long)(call.rows * call.length));
  if (!options.out.empty())
    return writeNpy(options.out, shape, logits);
  // The top tokens of each row's last position.
  bool forward = call.entry == EntryKind::Forward;
  int64_t width = shape.back();
  for (int64_t b = 0; b < call.rows; ++b) {
    const float *row =
        logits.data() +
        (forward ? ((b + 1) * call.length - 1) * width : b * width);
    std::vector<int64_t> order = largestLogits(row, width, options.top);
    llvm::outs() << "row " << b << ":";
    for (size_t i = 0; i < order.size(); ++i)
      llvm::outs() << " " << order[i] << " ("
                   << llvm::format("%.4f", row[order[i]]) << ")";
    llvm::outs() << "\n";
  }
  return llvm::Error::success();
}

llvm::Error ModelRun::runScript(const PackedEntryLookup &packed) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const EntryCall &call = calls[i];
    std::vector<int64_t> shape;
    std::vector<float> logits;
    auto callStart = std::chrono::steady_clock::now();
    if (llvm::Error error = callEntry(packed, call, shape, logits))
      return withContext("--script: " + callPrefix(i, call), std::move(error));
    double callSeconds = secondsSince(callStart);
    llvm::SmallString<256> path(options.out);
    llvm::sys::path::append(path, "call_" + std::to_string(i) + ".npy");
    if (llvm::Error error = writeNpy(path, shape, logits))
      return error;
    if (options.timings)
      llvm::errs() << llvm::format("%s: call %zu %s %.6f s (%lld tokens)\n",
                                   options.tool.c_str(), i,
                                   entryName(call.entry).data(), callSeconds,
                                   (long long)(call.rows * call.length));
  }
  if (options.timings)
    llvm::errs() << llvm::format("%s: load %.3f s\n", options.tool.c_str(),
                                 loadTime);
  return llvm::Error::success();
}

llvm::Error ModelRun::prepareGeneration(const SessionSizes &sizes) {
  unsigned count = *options.generate;
  if (count == 0)
    return fail(ErrorId::RunOptionsInvalid,
                "--generate: give at least 1 token to generate");
  bool interactive = options.chat && *options.chat == "-";
  std::string option = options.chat         ? "--chat"
                       : options.promptText ? "--prompt"
                                            : "--prompt-tokens";
  SamplingOptions defaults;
  if (options.promptText || options.chat) {
    if (llvm::Error error = loadText(
            options.tokenizer.empty() ? options.checkpoint : options.tokenizer,
            option))
      return error;
    defaults = generationConfig.sampling;
    if (!generationConfig.path.empty() && !options.sampling.temperature &&
        generationConfig.describeSampling() != "greedy")
      llvm::errs() << options.tool << ": note: sampling as `"
                   << generationConfig.path << "` asks ("
                   << generationConfig.describeSampling()
                   << "); --temperature 0 is greedy\n";
  }
  if (options.chat) {
    auto loaded = options.chatTemplate.empty()
                      ? tmpl::ChatTemplate::loadFolder(options.tokenizer.empty()
                                                           ? options.checkpoint
                                                           : options.tokenizer)
                      : tmpl::ChatTemplate::loadFile(options.chatTemplate,
                                                     options.tokenizer.empty()
                                                         ? options.checkpoint
                                                         : options.tokenizer);
    if (!loaded)
      return withContext("--chat: ", loaded.takeError());
    chatTemplate = std::make_unique<tmpl::ChatTemplate>(std::move(*loaded));
    tmpl::ChatInput input;
    if (!interactive) {
      auto buffer = llvm::MemoryBuffer::getFile(*options.chat);
      if (!buffer)
        return fail(ErrorId::MessagesMalformed,
                    "--chat: cannot read `" + *options.chat +
                        "`: " + buffer.getError().message());
      auto parsed = tmpl::parseChatInput((*buffer)->getBuffer(), *options.chat);
      if (!parsed)
        return withContext("--chat: ", parsed.takeError());
      input = std::move(*parsed);
    }
    if (options.thinking) {
      input.extra.set("enable_thinking",
                      tmpl::Value::boolean(*options.thinking));
      if (!chatTemplate->mentions("enable_thinking"))
        llvm::errs() << options.tool << ": note: the chat template `"
                     << chatTemplate->origin()
                     << "` does not read `enable_thinking`; --thinking "
                        "changes nothing\n";
    }
    conversation =
        std::make_unique<ChatConversation>(*chatTemplate, *tokenizer, input);
    if (options.systemMessage)
      conversation->addMessage("system", *options.systemMessage);
    if (!interactive) {
      auto turn = conversation->start();
      if (!turn)
        return withContext("--chat: ", turn.takeError());
      promptIds = std::move(turn->ids);
    }
  } else if (options.promptText) {
    auto ids = tokenizer->encode(*options.promptText);
    if (!ids)
      return withContext("--prompt: ", ids.takeError());
    promptIds = std::move(*ids);
  } else {
    auto rows = parseTokenRows("--prompt-tokens", *options.prompt, sizes.vocab);
    if (!rows)
      return rows.takeError();
    if (rows->size() != 1)
      return fail(ErrorId::TokenRowsMalformed,
                  "--prompt-tokens: " + std::to_string(rows->size()) +
                      " rows; give one prompt, ids separated by `,`");
    promptIds = rows->front();
  }
  sampler.emplace(options.sampling.over(defaults));
  if (llvm::Error error = sampler->options().validate())
    return error;

  if (!interactive) {
    if (promptIds.empty())
      return fail(ErrorId::RunOptionsInvalid,
                  option + ": the prompt is empty; give the text to start "
                           "from");
    if (llvm::Error error = checkVocabulary(promptIds, option))
      return error;
    // The last generated token is not fed back.
    int64_t total = int64_t(promptIds.size()) + int64_t(count) - 1;
    if (total > sizes.maxSeq)
      return fail(ErrorId::CallPositionInvalid,
                  "--generate: the prompt's " +
                      std::to_string(promptIds.size()) + " tokens and " +
                      std::to_string(count - 1) +
                      " generated ones fed back need " + std::to_string(total) +
                      " positions, more than the cache holds (`MaxSeq` = " +
                      std::to_string(sizes.maxSeq) + ")");
    if (llvm::Error error =
            checkCalls(option, *manifest, {prefillCall(promptIds, 0)}))
      return error;
  } else if (!manifest->hasEntry("prefill")) {
    return fail(ErrorId::EntryUnavailable,
                "--chat: `" + manifest->model + "` has no entry `prefill`");
  }
  if (count > 1 && !manifest->hasEntry("decode"))
    return fail(ErrorId::EntryUnavailable,
                "--generate: `" + manifest->model + "` has no entry `decode`");
  if (!options.transcript.empty()) {
    std::error_code ec;
    transcript = std::make_unique<llvm::raw_fd_ostream>(options.transcript, ec);
    if (ec)
      return fail(ErrorId::OutputUnwritable, "--transcript: cannot write `" +
                                                 options.transcript +
                                                 "`: " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error ModelRun::loadText(llvm::StringRef folder, llvm::StringRef option) {
  auto loaded = Tokenizer::loadFolder(folder);
  if (!loaded)
    return withContext(option + ": ", loaded.takeError());
  tokenizer = std::make_unique<Tokenizer>(std::move(*loaded));
  auto config = GenerationConfig::loadFolder(folder);
  if (!config)
    return config.takeError();
  generationConfig = std::move(*config);
  return llvm::Error::success();
}

llvm::Error ModelRun::prepareServing() {
  for (llvm::StringRef entry : {"prefill_slots", "decode_rows"})
    if (!manifest->hasEntry(entry))
      return fail(ErrorId::EntryUnavailable,
                  "--serve: `" + manifest->model + "` has no entry `" + entry +
                      "`; a server starts requests with `prefill_slots` and "
                      "steps them with `decode_rows`");
  std::string folder =
      options.tokenizer.empty() ? options.checkpoint : options.tokenizer;
  if (llvm::Error error = loadText(folder, "--serve"))
    return error;
  auto loaded =
      options.chatTemplate.empty()
          ? tmpl::ChatTemplate::loadFolder(folder)
          : tmpl::ChatTemplate::loadFile(options.chatTemplate, folder);
  if (loaded)
    chatTemplate = std::make_unique<tmpl::ChatTemplate>(std::move(*loaded));
  else if (options.chatTemplate.empty())
    missingTemplate = llvm::toString(loaded.takeError());
  else
    return withContext("--chat-template: ", loaded.takeError());
  return llvm::Error::success();
}

llvm::Error ModelRun::checkVocabulary(llvm::ArrayRef<int32_t> ids,
                                      llvm::StringRef option) const {
  auto sizes = manifest->sizes();
  if (!sizes)
    return sizes.takeError();
  for (int32_t id : ids)
    if (id >= sizes->vocab)
      return fail(ErrorId::TokenOutOfVocabulary,
                  option + ": the tokenizer gives the id " +
                      std::to_string(id) + ", but `" + manifest->model +
                      "` is bound to `Vocab` = " +
                      std::to_string(sizes->vocab) + "; the tokenizer in `" +
                      llvm::sys::path::parent_path(tokenizer->path()) +
                      "` is not this checkpoint's");
  return llvm::Error::success();
}

EntryCall ModelRun::prefillCall(llvm::ArrayRef<int32_t> ids,
                                int32_t pos) const {
  // The prompt runs on every slot (`Batch` identical rows), so generation
  // works whatever `Batch` is; row 0's tokens are printed.
  int64_t batch = manifest->sizes() ? manifest->sizes()->batch : 1;
  EntryCall call;
  call.entry = EntryKind::Prefill;
  call.rows = batch;
  call.length = int64_t(ids.size());
  call.pos = pos;
  for (int64_t b = 0; b < batch; ++b)
    call.tokens.insert(call.tokens.end(), ids.begin(), ids.end());
  return call;
}

llvm::Expected<GeneratedReply>
ModelRun::generateReply(const PackedEntryLookup &packed,
                        llvm::ArrayRef<int32_t> ids, bool fromStart,
                        unsigned turn) {
  auto sizes = manifest->sizes();
  if (!sizes)
    return sizes.takeError();
  std::string where =
      turn ? "--chat: turn " + std::to_string(turn) + ": " : "--generate: ";
  if (fromStart) {
    fed.clear();
    pending.reset();
  }
  std::vector<int32_t> input;
  if (pending)
    input.push_back(*pending);
  input.insert(input.end(), ids.begin(), ids.end());
  if (tokenizer)
    if (llvm::Error error =
            checkVocabulary(input, llvm::StringRef(where).drop_back(2)))
      return std::move(error);
  int64_t pos = int64_t(fed.size());
  // Positions left once the prompt is in; the last token is not fed.
  int64_t room = sizes->maxSeq - pos - int64_t(input.size());
  if (room < 0)
    return fail(ErrorId::CallPositionInvalid,
                where + "the conversation's " + std::to_string(pos) +
                    " tokens and this turn's " + std::to_string(input.size()) +
                    " need more positions than the cache holds (`MaxSeq` = " +
                    std::to_string(sizes->maxSeq) +
                    "); start a new conversation");
  unsigned count = *options.generate;
  if (int64_t(count) > room + 1) {
    count = unsigned(room + 1);
    llvm::errs() << options.tool << ": note: " << where << "the cache holds "
                 << room << " more tokens (`MaxSeq` = " << sizes->maxSeq
                 << "); the reply ends after " << count << "\n";
  }

  GeneratedReply reply;
  reply.position = pos;
  reply.fedCount = input.size();
  std::vector<int64_t> shape;
  std::vector<float> logits;
  EntryCall step = prefillCall(input, int32_t(pos));
  std::optional<TextStream> stream;
  if (tokenizer)
    stream.emplace(*tokenizer);
  StopStringMatcher stops(options.stopStrings);
  bool endedOnStopId = false;
  // What the penalties read: everything the state holds, then each token
  // generated.
  std::vector<int32_t> history = fed;
  llvm::append_range(history, input);
  auto print = [&](llvm::StringRef text) {
    llvm::outs() << text;
    llvm::outs().flush();
    reply.text += text;
  };
  while (reply.ids.size() < count) {
    auto stepStart = std::chrono::steady_clock::now();
    if (llvm::Error error = callEntry(packed, step, shape, logits))
      return withContext(where + "step " + std::to_string(reply.ids.size()) +
                             ": ",
                         std::move(error));
    (reply.ids.empty() ? reply.prefillSeconds : reply.decodeSeconds) +=
        secondsSince(stepStart);
    // Row 0's logits (every row runs the same tokens).
    int32_t best = sampler->sample(logits.data(), shape.back(), history);
    reply.ids.push_back(best);
    history.push_back(best);
    if (tokenizer) {
      // Text as it comes; an end-of-sequence id ends it, unprinted.
      if (llvm::is_contained(generationConfig.stopIds, best)) {
        endedOnStopId = reply.stopped = true;
        break;
      }
      // The model's vocabulary may be larger than the tokenizer's (padded
      // embeddings): such an id has no text, as in HF's decoding.
      if (best >= tokenizer->vocabularySize() ||
          tokenizer->tokenBytes(best).empty()) {
        ++reply.untokened;
      } else {
        auto text = stream->push(best);
        if (!text)
          return withContext(where, text.takeError());
        print(stops.push(*text));
        if (stops.stopped()) {
          reply.stopped = true;
          break;
        }
      }
    }
    int32_t nextPos = int32_t(step.pos + step.length);
    step = EntryCall();
    step.entry = EntryKind::Decode;
    step.rows = sizes->batch;
    step.length = 1;
    step.tokens.assign(size_t(sizes->batch), best);
    step.pos = nextPos;
  }
  if (stream && !stops.stopped()) {
    print(stops.push(stream->finish()));
    print(stops.finish());
  }
  // The state holds the input and every generated token but the last,
  // which the next turn feeds unless it ended the reply.
  llvm::append_range(fed, input);
  fed.insert(fed.end(), reply.ids.begin(), reply.ids.end() - 1);
  pending.reset();
  if (!endedOnStopId)
    pending = reply.ids.back();
  if (transcript) {
    llvm::json::Array fedIds(input), generatedIds(reply.ids);
    *transcript << llvm::json::Value(llvm::json::Object{
                       {"turn", int64_t(turn)},
                       {"pos", pos},
                       {"fed", std::move(fedIds)},
                       {"generated", std::move(generatedIds)},
                       {"finish_reason", reply.stopped ? "stop" : "length"}})
                << "\n";
    transcript->flush();
  }
  return reply;
}

void ModelRun::reportReply(const GeneratedReply &reply, unsigned turn) const {
  if (reply.untokened)
    llvm::errs() << options.tool << ": note: " << reply.untokened
                 << " generated ids have no token in `" << tokenizer->path()
                 << "` (its ids are below " << tokenizer->vocabularySize()
                 << ", the model's are not): they print as nothing\n";
  if (!options.timings)
    return;
  llvm::errs() << options.tool << ": ";
  if (turn)
    llvm::errs() << "turn " << turn << ": ";
  else
    llvm::errs() << llvm::format("load %.3f s, ", loadTime);
  llvm::errs() << llvm::format("prefill %.3f s (%lld tokens",
                               reply.prefillSeconds, (long long)reply.fedCount);
  if (turn)
    llvm::errs() << " at position " << reply.position;
  llvm::errs() << ")";
  if (reply.ids.size() > 1)
    llvm::errs() << llvm::format(
        ", decode %.3f s (%.1f tokens/s)", reply.decodeSeconds,
        double(reply.ids.size() - 1) / reply.decodeSeconds);
  llvm::errs() << "\n";
}

llvm::Error ModelRun::runGeneration(const PackedEntryLookup &packed) {
  if (options.chat)
    return runChat(packed);
  auto reply = generateReply(packed, promptIds, /*fromStart=*/true, 0);
  if (!reply)
    return reply.takeError();
  if (!tokenizer)
    for (size_t i = 0; i < reply->ids.size(); ++i)
      llvm::outs() << (i ? " " : "") << reply->ids[i];
  llvm::outs() << "\n";
  reportReply(*reply, 0);
  return llvm::Error::success();
}

llvm::Error ModelRun::runChat(const PackedEntryLookup &packed) {
  if (*options.chat != "-") {
    auto reply = generateReply(packed, promptIds, /*fromStart=*/true, 1);
    if (!reply)
      return reply.takeError();
    llvm::outs() << "\n";
    reportReply(*reply, 0);
    return llvm::Error::success();
  }
  // A conversation: a user message per line (a line ending in `\` goes on
  // on the next), a reply to each.
  bool terminal = llvm::sys::Process::StandardInIsUserInput();
  unsigned turn = 0, refused = 0, lineNumber = 0;
  while (true) {
    if (terminal)
      llvm::errs() << "> ";
    std::string message, line;
    unsigned firstLine = lineNumber + 1;
    bool more = false, read = false;
    while (std::getline(std::cin, line)) {
      read = true;
      ++lineNumber;
      more = !line.empty() && line.back() == '\\';
      if (more) {
        line.pop_back();
        line += '\n';
      }
      message += line;
      if (!more)
        break;
    }
    if (!read) {
      if (terminal)
        llvm::errs() << "\n";
      break;
    }
    if (llvm::StringRef(message).trim().empty())
      continue;
    std::string place = "standard input, line " + std::to_string(firstLine);
    auto refuse = [&](llvm::Error error) {
      ++refused;
      llvm::WithColor::error(llvm::errs(), options.tool)
          << "--chat: " << place << ": " << llvm::toString(std::move(error))
          << "\n";
    };
    if (std::optional<size_t> bad = firstInvalidUTF8(message)) {
      refuse(makeError(ErrorId::TextInvalid,
                       "the message is not valid UTF-8 (byte " +
                           std::to_string(*bad) + ")"));
      continue;
    }
    auto next = conversation->addUserMessage(message);
    if (!next) {
      refuse(next.takeError());
      continue;
    }
    ++turn;
    auto reply = generateReply(packed, next->ids, next->fromStart, turn);
    if (!reply)
      return reply.takeError();
    llvm::outs() << "\n";
    llvm::outs().flush();
    conversation->addReply(reply->text);
    reportReply(*reply, turn);
  }
  if (refused)
    return fail(ErrorId::ChatMessageRefused,
                "--chat: " + std::to_string(refused) + " of the " +
                    std::to_string(refused + turn) + " messages " +
                    (refused == 1 ? "was refused (its error is above)"
                                  : "were refused (their errors are above)"));
  return llvm::Error::success();
}

llvm::Error linnet::setPromptText(RunOptions &options,
                                  const llvm::cl::opt<std::string> &text,
                                  llvm::StringRef file) {
  if (text.getNumOccurrences() && !file.empty())
    return fail(ErrorId::RunOptionsInvalid,
                "--prompt and --prompt-file are two prompts; give one");
  if (text.getNumOccurrences())
    options.promptText = text.getValue();
  if (file.empty())
    return llvm::Error::success();
  auto buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(file, /*IsText=*/false, false);
  if (!buffer)
    return fail(ErrorId::RunOptionsInvalid,
                "--prompt-file: cannot read `" + file +
                    "`: " + buffer.getError().message());
  options.promptText = (*buffer)->getBuffer().str();
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::vector<int32_t>>>
linnet::parseTokenRows(llvm::StringRef option, llvm::StringRef text,
                       int64_t vocab) {
  std::vector<std::vector<int32_t>> rows;
  llvm::SmallVector<llvm::StringRef> rowTexts;
  text.split(rowTexts, ';');
  for (size_t r = 0; r < rowTexts.size(); ++r) {
    llvm::StringRef rowText = rowTexts[r].trim();
    if (rowText.empty())
      return makeError(
          ErrorId::TokenRowsMalformed,
          option + ": row " + std::to_string(r) +
              " is empty; give rows of token ids like \"1,2,3;4,5,6\"");
    llvm::SmallVector<llvm::StringRef> ids;
    rowText.split(ids, ',');
    std::vector<int32_t> row;
    for (size_t i = 0; i < ids.size(); ++i) {
      int64_t id;
      llvm::StringRef idText = ids[i].trim();
      if (idText.empty())
        return makeError(ErrorId::TokenRowsMalformed,
                         option + ": position " + std::to_string(i) +
                             " of row " + std::to_string(r) +
                             " is empty; ids are separated by one `,`");
      if (idText.getAsInteger(10, id))
        return makeError(ErrorId::TokenRowsMalformed,
                         option + ": `" + idText.str() + "` (row " +
                             std::to_string(r) + ", position " +
                             std::to_string(i) + ") is not a token id");
      if (id < 0 || id >= vocab)
        return makeError(ErrorId::TokenOutOfVocabulary,
                         option + ": token id " + std::to_string(id) +
                             " (row " + std::to_string(r) + ", position " +
                             std::to_string(i) +
                             ") is outside the vocabulary [0, " +
                             std::to_string(vocab) + ")");
      row.push_back(int32_t(id));
    }
    if (!rows.empty() && row.size() != rows.front().size())
      return makeError(ErrorId::TokenRowsMalformed,
                       option + ": row " + std::to_string(r) + " has " +
                           std::to_string(row.size()) +
                           " tokens but row 0 has " +
                           std::to_string(rows.front().size()) +
                           "; every row of a batch has the same length");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<int64_t> linnet::largestLogits(const float *row, int64_t width,
                                           size_t count) {
  std::vector<int64_t> order(static_cast<size_t>(width));
  std::iota(order.begin(), order.end(), 0);
  count = std::min(count, order.size());
  // A total order: larger first, NaN after every number, ties to the lower
  // id.
  auto before = [&](int64_t x, int64_t y) {
    bool xNaN = std::isnan(row[x]), yNaN = std::isnan(row[y]);
    if (xNaN != yNaN)
      return yNaN;
    if (!xNaN && row[x] != row[y])
      return row[x] > row[y];
    return x < y;
  };
  std::partial_sort(order.begin(), order.begin() + int64_t(count), order.end(),
                    before);
  order.resize(count);
  return order;
}

float linnet::elementToFloat(const void *data, ElementType element, int64_t i) {
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

llvm::Error linnet::writeNpy(llvm::StringRef path,
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
  return writeOutputFile(path, [&](llvm::raw_ostream &os) {
    os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
       << char(header.size() >> 8) << header;
    os.write(reinterpret_cast<const char *>(values.data()),
             values.size() * sizeof(float));
  });
}

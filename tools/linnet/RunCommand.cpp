//===- RunCommand.cpp - `linnet run` --------------------------------------===//
//
// Runs a model on a checkpoint, on the CPU: binds the generics from the
// checkpoint's config.json (and `--bind` overrides), validates every
// parameter against the checkpoint, compiles the entries in-process through
// the CPU target and runs them through the runtime's ModelRun, the code a
// binary made by `linnet build` runs too: `--tokens` (one stateless entry),
// `--script` (entry calls against one session) or `--generate` from ids, a
// text or a chat.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Runtime/GenerationFlags.h"
#include "linnet/Runtime/ModelRun.h"
#include "linnet/Target/CPU/CompileCache.h"
#include "linnet/Target/CPU/CpuExecutable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
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
                  cl::value_desc("dir"), cl::sub(runCommand));
cl::opt<uint64_t> runRandomWeights(
    "random-weights",
    cl::desc("Draw the weights from this seed instead of a checkpoint (the "
             "values `init-checkpoint --seed` writes); the sizes come from "
             "--bind"),
    cl::value_desc("seed"), cl::sub(runCommand));
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
cl::opt<std::string> runOutput(
    "out",
    cl::desc("Write the logits as a float32 .npy file (with --script: a "
             "folder for call_<i>.npy)"),
    cl::value_desc("file.npy|dir"), cl::sub(runCommand));
cl::opt<unsigned> runTop("top",
                         cl::desc("Tokens printed per row without "
                                  "--out (default 5)"),
                         cl::init(5), cl::sub(runCommand));
cl::opt<std::string> runTarget(
    "target",
    cl::desc("The target: cpu (the default), or cuda (with --device)"),
    cl::init("cpu"), cl::sub(runCommand));
cl::opt<std::string> runDevice(
    "device",
    cl::desc("With --target cuda: gpu (the default: GPU 0, through the CUDA "
             "driver) or emulated (the GPU kernels run by this machine's CPU, "
             "one thread at a time)"),
    cl::sub(runCommand));
GenerationFlags runGeneration(runCommand);
cl::opt<bool> runTimings("timings",
                         cl::desc("Print the time of each step to stderr"),
                         cl::sub(runCommand));

/// Seconds since `start`, for --timings.
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int linnet::driver::runRun(const char *argv0) {
  RunOptions options;
  if (runEntry.getNumOccurrences())
    options.entry = runEntry;
  if (runTokens.getNumOccurrences())
    options.tokens = runTokens;
  if (runScriptPath.getNumOccurrences())
    options.script = runScriptPath;
  if (llvm::Error error = runGeneration.apply(options))
    return reportError(std::move(error));
  options.out = runOutput;
  options.top = runTop;
  ModelSource source;
  source.input = runInput;
  source.includes.assign(runIncludes.begin(), runIncludes.end());
  source.checkpoint = runCheckpoint;
  if (runRandomWeights.getNumOccurrences())
    source.randomWeights = runRandomWeights.getValue();
  source.bindings.assign(runBindings.begin(), runBindings.end());
  source.target = runTarget;
  if (runDevice.getNumOccurrences())
    source.device = runDevice;
  source.timings = runTimings;
  return runModel(argv0, source, std::move(options),
                  [](ModelRun &run, const PackedEntryLookup &call) {
                    return run.execute(call);
                  });
}

int linnet::driver::runModel(
    const char *argv0, const ModelSource &source, RunOptions options,
    llvm::function_ref<llvm::Error(ModelRun &, const PackedEntryLookup &)>
        execute) {
  auto start = std::chrono::steady_clock::now();
  options.checkpoint = source.checkpoint;
  options.randomWeights = source.randomWeights;
  options.timings = source.timings;
  std::vector<std::string> bindArgs;
  if (!source.checkpoint.empty()) {
    auto config = checkpointConfig(source.checkpoint);
    if (!config)
      return reportError(config.takeError());
    bindArgs.push_back(*config);
  }
  bindArgs.insert(bindArgs.end(), source.bindings.begin(),
                  source.bindings.end());
  if (llvm::Error error = options.validate())
    return reportError(std::move(error));
  std::optional<CudaPipelineOptions> cuda;
  if (source.target == "cuda") {
    if (source.device && *source.device != "gpu" &&
        *source.device != "emulated")
      return reportError(ErrorId::OptionInvalid,
                         "--device: `" + *source.device +
                             "` is not a device of --target cuda (gpu, "
                             "emulated)");
    cuda.emplace();
    cuda->emulated = source.device == "emulated";
    if (!cuda->emulated)
      options.gpu = CudaRequirements::forChip(cuda->chip);
  } else if (source.target != "cpu") {
    return reportError(ErrorId::OptionInvalid,
                       "--target: `" + source.target + "` is not a target `" +
                           options.tool.substr(7) + "` knows (cpu, cuda)");
  } else if (source.device) {
    return reportError(ErrorId::OptionInvalid,
                       "--device is for --target cuda; the CPU target runs "
                       "on this machine");
  }

  DriverSession session;
  if (!session.load(argv0, source.input, source.includes))
    return 1;
  if (options.randomWeights) {
    // No config: sizes a checkpoint would not hold either (`Batch`) take
    // the binding's defaults, as for init-checkpoint.
    std::optional<CheckpointBinding> binding = loadRootBinding(session);
    if (!binding)
      return 1;
    bindArgs.insert(bindArgs.begin(),
                    binding->config().defaultBindings().begin(),
                    binding->config().defaultBindings().end());
  }
  // The inputs and the checkpoint are checked once the sizes are bound,
  // before the model is compiled; then only the entries the run calls are.
  ModelManifest manifest;
  std::unique_ptr<ModelRun> run;
  std::vector<std::string> entries;
  auto prepare = [&](const BoundModel &bound) {
    auto built = buildManifest(session.program, bound);
    if (!built) {
      reportError(built.takeError());
      return false;
    }
    manifest = std::move(*built);
    auto prepared = ModelRun::prepare(manifest, options);
    if (!prepared) {
      reportError(prepared.takeError());
      return false;
    }
    run = std::move(*prepared);
    entries = run->entries();
    return true;
  };
  // The JIT compiles for this machine's CPU.
  CpuPipelineOptions cpuOptions = cpuPipelineOptionsFor("native");
  CompiledModel compiled;
  if (!compileModel(session, bindArgs, entries, LoweringStage::LLVM, cpuOptions,
                    compiled, prepare, cuda ? &*cuda : nullptr))
    return 1;
  double compileSeconds = secondsSince(start) - run->loadSeconds();

  auto jitStart = std::chrono::steady_clock::now();
  CpuCompileOptions jitOptions;
  // The emulated device checks the GPU plan and is not a fast path:
  // unoptimized, as in a built binary's emulated plan. At O3, LLVM's code
  // generation took 83 of the 112 s of the test model's run; at O0, 5 s,
  // with calls 4 times slower (0.07 -> 0.27 s).
  if (cuda && cuda->emulated)
    jitOptions.optLevel = 0;
  jitOptions.symbols = cuda && !cuda->emulated
                           ? CudaDevice::generatedCodeSymbols()
                           : generatedCodeSymbols();
  std::string cacheWarning;
  std::unique_ptr<CompileCache> cache =
      CompileCache::fromEnvironment(cacheWarning);
  if (!cacheWarning.empty())
    llvm::errs() << options.tool << ": warning: " << cacheWarning << "\n";
  jitOptions.cache = cache.get();
  auto executable = CpuExecutable::compile(*compiled.module, jitOptions);
  if (!executable)
    return reportError(
        withContext("cannot compile the model: ", executable.takeError()));
  // Every symbol is looked up here, so that a failure to link is this
  // error and not a call's.
  for (const std::string &entry : entries)
    if (auto symbol = (*executable)->lookup(entry); !symbol)
      return reportError(
          withContext("cannot compile the model: ", symbol.takeError()));
  if (source.timings)
    llvm::errs() << llvm::format("%s: compile %.3f s, code generation %.3f s",
                                 options.tool.c_str(), compileSeconds,
                                 secondsSince(jitStart))
                 << ((*executable)->fromCache() ? " (from the compile cache)"
                                                : "")
                 << "\n";
  auto call = [&](llvm::StringRef name) {
    return (*executable)->lookupPacked(name);
  };
  if (llvm::Error error = execute(*run, call))
    return reportError(std::move(error));
  return 0;
}

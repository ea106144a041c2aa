//===- StandaloneMain.cpp - The main() of a binary made by `linnet build` -===//
//
// `linnet build` links the model's object file and a generated table (the
// manifest's bytes and each entry's packed wrapper) with this library into
// one executable. It takes `linnet run`'s options minus the model's path and
// `--bind` (the sizes are compiled in), checks that the checkpoint's config
// agrees with them, and runs through the same ModelRun as `linnet run`; it
// needs neither the compiler nor the model's sources.
//
//===----------------------------------------------------------------------===//

#include "linnet/Basic/Errors.h"
#include "linnet/Runtime/GenerationFlags.h"
#include "linnet/Runtime/ModelRun.h"
#include "linnet/Serve/HttpServer.h"
#include "linnet/Serve/ServeFlags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace linnet;
namespace cl = llvm::cl;

/// What `linnet build` generates beside the model's object file.
struct LinnetEntry {
  const char *name;
  void (*packed)(void **);
};
extern "C" const LinnetEntry linnet_entries[];
/// A GPU binary's plan for the emulated device (empty in a CPU binary).
extern "C" const LinnetEntry linnet_emulated_entries[];
extern "C" const char linnet_manifest[];
/// The GPU the kernels are for (`sm_90a`); empty in a CPU binary.
extern "C" const char linnet_gpu_chip[];
extern "C" const unsigned long linnet_manifest_size;

namespace {

cl::opt<std::string>
    checkpoint("checkpoint",
               cl::desc("The checkpoint: config.json and safetensors"),
               cl::value_desc("dir"));
cl::opt<uint64_t> randomWeights(
    "random-weights",
    cl::desc("Draw the weights from this seed instead of a checkpoint (the "
             "values `linnet init-checkpoint --seed` writes)"),
    cl::value_desc("seed"));
cl::opt<std::string> entry("entry",
                           cl::desc("The entry: forward or next_token"),
                           cl::value_desc("name"), cl::init("forward"));
cl::opt<std::string>
    tokens("tokens",
           cl::desc("Token ids: rows separated by `;`, ids by `,`, all rows "
                    "of one length (\"1,2,3;4,5,6\")"),
           cl::value_desc("rows"));
cl::opt<std::string>
    script("script",
           cl::desc("Run the entry calls of a JSON script against one "
                    "session; write call_<i>.npy into --out"),
           cl::value_desc("calls.json"));
cl::opt<std::string>
    out("out",
        cl::desc("Write the logits as a float32 .npy file (with --script: a "
                 "folder for call_<i>.npy)"),
        cl::value_desc("file.npy|dir"));
cl::opt<unsigned> top("top",
                      cl::desc("Tokens printed per row without --out "
                               "(default 5)"),
                      cl::init(5));
linnet::GenerationFlags generation(cl::SubCommand::getTopLevel());
cl::opt<bool> timings("timings",
                      cl::desc("Print the time of each step to stderr"));
cl::opt<std::string>
    device("device",
           cl::desc("A GPU binary's device: gpu (the default, GPU 0 through "
                    "the CUDA driver) or emulated (the same kernels run by "
                    "this machine's CPU, one thread at a time)"),
           cl::value_desc("gpu|emulated"));
cl::opt<bool> serveRequests(
    "serve", cl::desc("Answer requests behind an OpenAI-compatible HTTP API "
                      "(continuous batching over the slots, prefix caching) "
                      "until SIGINT or SIGTERM"));
serve::ServeFlags serveFlags(cl::SubCommand::getTopLevel());
cl::list<std::string> bindings("bind",
                               cl::desc("Not accepted: the sizes are "
                                        "fixed when the binary is "
                                        "built"),
                               cl::Hidden);

std::string toolName;

int reportError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), toolName) << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  toolName = llvm::sys::path::filename(argv[0]).str();
  setGeneratedCodeToolName(toolName);
  auto manifest = ModelManifest::parse(
      llvm::StringRef(linnet_manifest, linnet_manifest_size));
  if (!manifest)
    return reportError(llvm::toString(manifest.takeError()));
  std::string sizes;
  for (const BoundGeneric &generic : manifest->generics)
    sizes += (sizes.empty() ? "" : ", ") + generic.name + " = " +
             (generic.kind == GenericKind::Float
                  ? elementTypeName(generic.element).str()
                  : std::to_string(generic.size));
  cl::ParseCommandLineOptions(argc, argv,
                              "`" + manifest->model +
                                  "` compiled by `linnet build` for " + sizes +
                                  "\n");
  if (!bindings.empty())
    return reportError(llvm::toString(
        makeError(ErrorId::RunOptionsInvalid,
                  "--bind: the sizes are fixed when the binary is built "
                  "(" +
                      sizes +
                      "); build again with `linnet build --bind` for "
                      "others")));

  llvm::StringRef gpuChip = linnet_gpu_chip;
  if (device.getNumOccurrences() &&
      (gpuChip.empty() || (device != "gpu" && device != "emulated")))
    return reportError(llvm::toString(makeError(
        ErrorId::RunOptionsInvalid,
        gpuChip.empty() ? "--device: this binary runs on the CPU; build it "
                          "with `--target cuda` for a GPU"
                        : "--device: `" + device +
                              "` is not a device this binary has code for "
                              "(gpu, emulated)")));
  bool emulated = device == "emulated";

  if (checkpoint.getNumOccurrences())
    if (auto config = checkpointConfig(checkpoint); !config)
      return reportError(llvm::toString(config.takeError()));
  RunOptions options;
  options.checkpoint = checkpoint;
  if (randomWeights.getNumOccurrences())
    options.randomWeights = randomWeights.getValue();
  if (entry.getNumOccurrences())
    options.entry = entry;
  if (tokens.getNumOccurrences())
    options.tokens = tokens;
  if (script.getNumOccurrences())
    options.script = script;
  if (llvm::Error error = generation.apply(options))
    return reportError(llvm::toString(std::move(error)));
  options.out = out;
  options.top = top;
  options.timings = timings;
  options.checkConfig = true;
  if (!gpuChip.empty() && !emulated)
    options.gpu = CudaRequirements::forChip(gpuChip);
  options.tool = toolName;
  options.serve = serveRequests;
  std::optional<serve::ServeOptions> serving;
  if (serveRequests) {
    llvm::StringRef folder =
        checkpoint.empty() ? options.tokenizer : options.checkpoint;
    auto given = serveFlags.options(
        llvm::sys::path::filename(llvm::StringRef(folder).rtrim('/')));
    if (!given)
      return reportError(llvm::toString(given.takeError()));
    serving = std::move(*given);
    serving->thinking = options.thinking;
    // --thinking is the server's default for requests, not a chat's.
    options.thinking.reset();
  }
  if (llvm::Error error = options.validate())
    return reportError(llvm::toString(std::move(error)));

  auto run = ModelRun::prepare(*manifest, options);
  if (!run)
    return reportError(llvm::toString(run.takeError()));
  const LinnetEntry *table =
      emulated ? linnet_emulated_entries : linnet_entries;
  auto call = [table](llvm::StringRef name) -> llvm::Expected<PackedEntry> {
    for (const LinnetEntry *e = table; e->name; ++e)
      if (name == e->name)
        return e->packed;
    return makeError(ErrorId::EntryUnavailable,
                     "the binary has no code for entry `" + name + "`");
  };
  if (!serving) {
    if (llvm::Error error = (*run)->execute(call))
      return reportError(llvm::toString(std::move(error)));
    return 0;
  }
  auto server = serve::listenFor(*serving);
  if (!server)
    return reportError(llvm::toString(server.takeError()));
  if (llvm::Error error =
          serve::serveModel(**run, call, *serving, std::move(*server)))
    return reportError(llvm::toString(std::move(error)));
  return 0;
}

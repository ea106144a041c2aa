//===- ServeCommand.cpp - `linnet serve` ----------------------------------===//
//
// Serves a model from its sources behind the OpenAI API: the model is bound
// and compiled as `linnet run` does (only `prefill_slots` and
// `decode_rows`), the checkpoint's tokenizer, generation_config.json and
// chat template are loaded, and requests are answered until SIGINT or
// SIGTERM. A binary made by `linnet build` serves the same way with
// --serve.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Serve/HttpServer.h"
#include "linnet/Serve/ServeFlags.h"

#include "llvm/Support/Path.h"

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::serveCommand(
    "serve", "Serve a model on a checkpoint behind an OpenAI-compatible "
             "HTTP API, with continuous batching and prefix caching");

namespace {

cl::opt<std::string> serveInput(cl::Positional, cl::desc("<file or folder>"),
                                cl::sub(serveCommand), cl::Required);
cl::list<std::string> serveIncludes("I", cl::desc("Add a module search root"),
                                    cl::value_desc("dir"), cl::Prefix,
                                    cl::sub(serveCommand));
cl::opt<std::string>
    serveCheckpoint("checkpoint",
                    cl::desc("The checkpoint: config.json, safetensors, "
                             "tokenizer.json, generation_config.json and the "
                             "chat template"),
                    cl::value_desc("dir"), cl::sub(serveCommand));
cl::opt<uint64_t> serveRandomWeights(
    "random-weights",
    cl::desc("Draw the weights from this seed instead of a checkpoint (with "
             "--tokenizer; the sizes come from --bind)"),
    cl::value_desc("seed"), cl::sub(serveCommand));
cl::list<std::string> serveBindings(
    "bind",
    cl::desc("Override generics after the checkpoint's config.json: a "
             "config.json, or Name=Value (repeatable); `Batch` is the number "
             "of slots, `MaxSeq` each one's context"),
    cl::value_desc("config.json|Name=Value"), cl::sub(serveCommand));
cl::opt<std::string> serveTokenizer(
    "tokenizer",
    cl::desc("The folder with the tokenizer.json, generation_config.json and "
             "chat template, instead of the checkpoint"),
    cl::value_desc("dir"), cl::sub(serveCommand));
cl::opt<std::string>
    serveChatTemplate("chat-template",
                      cl::desc("The Jinja chat template in FILE instead of "
                               "the checkpoint's"),
                      cl::value_desc("file"), cl::sub(serveCommand));
cl::opt<std::string>
    serveThinking("thinking",
                  cl::desc("`on` or `off`: the template's `enable_thinking` "
                           "for requests that do not set it in "
                           "`chat_template_kwargs`"),
                  cl::value_desc("on|off"), cl::sub(serveCommand));
cl::opt<std::string> serveTarget(
    "target",
    cl::desc("The target: cpu (the default), or cuda (with --device)"),
    cl::init("cpu"), cl::sub(serveCommand));
cl::opt<std::string>
    serveDevice("device",
                cl::desc("With --target cuda: gpu (the default) or emulated"),
                cl::sub(serveCommand));
serve::ServeFlags serveFlags(serveCommand);

} // namespace

int linnet::driver::runServe(const char *argv0) {
  RunOptions options;
  options.serve = true;
  options.tool = "linnet serve";
  options.tokenizer = serveTokenizer;
  options.chatTemplate = serveChatTemplate;
  std::optional<bool> thinking;
  if (serveThinking.getNumOccurrences()) {
    if (serveThinking != "on" && serveThinking != "off")
      return reportError(ErrorId::RunOptionsInvalid,
                         "--thinking: expected `on` or `off`, found `" +
                             serveThinking + "`");
    thinking = serveThinking == "on";
  }
  ModelSource source;
  source.input = serveInput;
  source.includes.assign(serveIncludes.begin(), serveIncludes.end());
  source.checkpoint = serveCheckpoint;
  if (serveRandomWeights.getNumOccurrences())
    source.randomWeights = serveRandomWeights.getValue();
  source.bindings.assign(serveBindings.begin(), serveBindings.end());
  source.target = serveTarget;
  if (serveDevice.getNumOccurrences())
    source.device = serveDevice;
  llvm::StringRef folder = serveCheckpoint.empty()
                               ? llvm::StringRef(serveTokenizer)
                               : llvm::StringRef(serveCheckpoint);
  auto serving = serveFlags.options(
      llvm::sys::path::filename(llvm::StringRef(folder).rtrim('/')));
  if (!serving)
    return reportError(serving.takeError());
  serving->thinking = thinking;
  auto server = serve::listenFor(*serving);
  if (!server)
    return reportError(server.takeError());
  return runModel(argv0, source, std::move(options),
                  [&](ModelRun &run, const PackedEntryLookup &call) {
                    return serve::serveModel(run, call, *serving,
                                             std::move(*server));
                  });
}

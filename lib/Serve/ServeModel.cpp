//===- ServeModel.cpp - A prepared model behind the OpenAI API ------------===//
//
// Ties the pieces together for `linnet serve` and built binaries: the
// scheduler calls the model's entries through the run, the HTTP server
// hands requests to the OpenAI endpoints, and SIGINT or SIGTERM stops both
// (requests still running hear that the server is shutting down).
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/ServeFlags.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Serve/HttpServer.h"
#include "linnet/Serve/OpenAIServer.h"
#include "linnet/Serve/Scheduler.h"

#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace linnet;
using namespace linnet::serve;
namespace cl = llvm::cl;

namespace {
HttpServer *runningServer = nullptr;

void stopServing(int) {
  if (runningServer)
    runningServer->shutdown();
}
} // namespace

ServeFlags::ServeFlags(cl::SubCommand &command)
    : host("host",
           cl::desc("The address to listen on (default "
                    "127.0.0.1; 0.0.0.0 for every interface)"),
           cl::init("127.0.0.1"), cl::sub(command)),
      apiKey("api-key",
             cl::desc("Answer only requests that carry this "
                      "key as `Authorization: Bearer KEY` (/health excepted)"),
             cl::sub(command)),
      modelName("model-name",
                cl::desc("The model's name in /v1/models and "
                         "requests (default: the checkpoint folder's name)"),
                cl::sub(command)),
      port("port",
           cl::desc("The TCP port (default 8080; 0: one the "
                    "system chooses, printed)"),
           cl::init(8080), cl::sub(command)),
      maxQueue("max-queue",
               cl::desc("The most requests waiting for a slot; "
                        "more are answered 429 (default 64)"),
               cl::init(64), cl::sub(command)),
      maxConnections("max-connections",
                     cl::desc("The most open connections; more "
                              "are answered 503 (default 256)"),
                     cl::init(256), cl::sub(command)),
      prefillBudget("prefill-budget",
                    cl::desc("The most tokens (rows x padded "
                             "length) one prefill_slots call starts "
                             "(default 2048)"),
                    cl::init(2048), cl::sub(command)),
      prefixCacheMiB("prefix-cache-mib",
                     cl::desc("MiB of state snapshots kept for "
                              "prompts that start alike (default 1024; 0: "
                              "none)"),
                     cl::init(1024), cl::sub(command)),
      maxRestAfterSnapshot(
          "prefix-cache-rest",
          cl::desc("The most prompt tokens fed a step at a time "
                   "after a snapshot; a longer rest is prefilled whole "
                   "(default 256)"),
          cl::init(256), cl::sub(command)) {}

llvm::Expected<ServeOptions>
ServeFlags::options(llvm::StringRef defaultName) const {
  ServeOptions options;
  options.host = host;
  if (port > 65535)
    return makeError(ErrorId::RunOptionsInvalid,
                     "--port: " + llvm::Twine(unsigned(port)) +
                         " is not a TCP port (0 to 65535)");
  if (maxQueue == 0 || maxConnections == 0 || prefillBudget == 0)
    return makeError(ErrorId::RunOptionsInvalid,
                     std::string(maxQueue == 0         ? "--max-queue"
                                 : maxConnections == 0 ? "--max-connections"
                                                       : "--prefill-budget") +
                         ": give at least 1");
  options.port = port;
  options.apiKey = apiKey;
  options.modelName =
      modelName.empty() ? defaultName.str() : modelName.getValue();
  options.maxQueue = maxQueue;
  options.maxConnections = maxConnections;
  options.prefillBudget = prefillBudget;
  options.prefixCacheMiB = prefixCacheMiB;
  options.maxRestAfterSnapshot = maxRestAfterSnapshot;
  return options;
}

llvm::Expected<std::unique_ptr<HttpServer>>
serve::listenFor(const ServeOptions &options) {
  auto server = HttpServer::listen(options.host, uint16_t(options.port),
                                   HttpLimits(), options.maxConnections);
  if (server)
    (*server)->malformedBody = errorBody;
  return server;
}

llvm::Error serve::serveModel(ModelRun &run, const PackedEntryLookup &entries,
                              const ServeOptions &options,
                              std::unique_ptr<HttpServer> server) {
  ServerMetrics metrics;
  SchedulerOptions scheduling;
  scheduling.maxQueue = options.maxQueue;
  scheduling.prefillBudget = options.prefillBudget;
  scheduling.prefixCacheBytes = uint64_t(options.prefixCacheMiB) << 20;
  scheduling.maxRestAfterSnapshot = options.maxRestAfterSnapshot;
  std::vector<int64_t> shape;
  Scheduler scheduler(
      run.states(), *run.textTokenizer(),
      [&](const EntryCall &call, std::vector<float> &logits) {
        return run.call(entries, call, shape, logits);
      },
      metrics, scheduling);

  OpenAIOptions api;
  api.modelName = options.modelName;
  api.apiKey = options.apiKey;
  api.thinking = options.thinking;
  OpenAIServer endpoints(scheduler, *run.textTokenizer(),
                         run.generationDefaults(), run.chatTemplateOrNull(),
                         run.chatTemplateProblem(), metrics, api);
  scheduler.start();
  runningServer = server.get();
  std::signal(SIGINT, stopServing);
  std::signal(SIGTERM, stopServing);
  std::signal(SIGPIPE, SIG_IGN);
  llvm::errs() << run.modelManifest().model << ": serving `"
               << options.modelName << "` on http://" << options.host << ":"
               << server->port() << " (" << scheduler.slots() << " slots of "
               << scheduler.maxSeq() << " tokens)\n";
  llvm::errs().flush();
  HttpHandler handler = [&](const HttpRequest &request,
                            HttpResponder &responder) {
    endpoints.handle(request, responder);
  };
  server->serve(handler);
  // Requests still waiting hear that the server stops; then their
  // connections end.
  scheduler.stop();
  server->closeConnections(std::chrono::seconds(10));
  runningServer = nullptr;
  llvm::errs() << "stopped\n";
  return llvm::Error::success();
}

//===- ServeFlags.h - The options of a server -------------------*- C++ -*-===//
//
// `linnet serve` and a built binary's --serve take the same options: where
// to listen, the API key, the queue, the prefill budget and the prefix
// cache. This declares them once, under the subcommand that takes them,
// and runs the server once the model is ready.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_SERVEFLAGS_H
#define LINNET_SERVE_SERVEFLAGS_H

#include "linnet/Runtime/ModelRun.h"

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>

namespace linnet::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  unsigned port = 8080;
  std::string apiKey;
  std::string modelName;
  unsigned maxQueue = 64;
  unsigned maxConnections = 256;
  unsigned prefillBudget = 2048;
  unsigned prefixCacheMiB = 1024;
  unsigned maxRestAfterSnapshot = 256;
  std::optional<bool> thinking;
};

class HttpServer;

/// Listens where `options` say: done before the model is compiled, so that
/// an address in use costs no compile time.
llvm::Expected<std::unique_ptr<HttpServer>>
listenFor(const ServeOptions &options);

/// Answers requests with `run` (prepared with `serve`) on `server` (from
/// listenFor) until SIGINT or SIGTERM.
llvm::Error serveModel(ModelRun &run, const PackedEntryLookup &entries,
                       const ServeOptions &options,
                       std::unique_ptr<HttpServer> server);

struct ServeFlags {
  explicit ServeFlags(llvm::cl::SubCommand &command);

  /// The options given; `defaultName` names the model when --model-name
  /// is not given. An error for a port out of range.
  llvm::Expected<ServeOptions> options(llvm::StringRef defaultName) const;

  llvm::cl::opt<std::string> host, apiKey, modelName;
  llvm::cl::opt<unsigned> port, maxQueue, maxConnections, prefillBudget,
      prefixCacheMiB, maxRestAfterSnapshot;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_SERVEFLAGS_H

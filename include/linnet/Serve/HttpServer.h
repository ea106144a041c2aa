//===- HttpServer.h - HTTP/1.1 on POSIX sockets, Beast's parser -*- C++ -*-===//
//
// The server speaks HTTP/1.1 with keep-alive, fixed-length responses and
// chunked server-sent events. Beast's parser (header-only, so a built
// binary carries it) reads requests within fixed limits; the sockets are
// plain POSIX, one thread per connection, so that a handler can block on
// its request's tokens and see at once, through poll, a client that hung
// up. Every wait has a timeout: a client that sends nothing or reads
// nothing cannot hold a thread forever.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_HTTPSERVER_H
#define LINNET_SERVE_HTTPSERVER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace linnet::serve {

struct HttpRequest {
  std::string method, target;
  /// The target without its query string.
  std::string path;
  /// Names in lower case, in the order they came.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool keepAlive = true;

  /// The first header called `name` (lower case), or empty.
  llvm::StringRef header(llvm::StringRef name) const;
};

struct HttpLimits {
  size_t headerBytes = 16 << 10;
  size_t bodyBytes = 16 << 20;
};

/// Reads requests from a connection's bytes as they come.
class HttpRequestReader {
public:
  enum class Status { NeedMore, Complete, Invalid };
  explicit HttpRequestReader(HttpLimits limits);
  ~HttpRequestReader();

  /// Appends `bytes` to what has come; Complete when a whole request is
  /// there (take() gives it, keeping any bytes after it for the next).
  Status feed(llvm::StringRef bytes);
  HttpRequest take();
  /// With Invalid: the status to answer (400, 413, 431) and why.
  int errorStatus() const { return status; }
  const std::string &errorMessage() const { return message; }
  /// Whether part of a request has come.
  bool midRequest() const { return !buffer.empty() || started; }

private:
  struct Parser;
  Status parse();

  HttpLimits limits;
  std::unique_ptr<Parser> parser;
  std::string buffer;
  bool started = false;
  int status = 400;
  std::string message;
};

/// What a handler answers on.
class HttpResponder {
public:
  HttpResponder(int socket, bool keepAlive)
      : socket(socket), keepAlive(keepAlive) {}

  /// A whole response.
  void
  respond(int status, llvm::StringRef contentType, llvm::StringRef body,
          const std::vector<std::pair<std::string, std::string>> &headers = {});
  /// A `text/event-stream` response sent a chunk at a time; false when the
  /// client is gone.
  bool startEvents();
  bool sendEvent(llvm::StringRef data);
  void endEvents();
  /// Whether the client hung up (its side closed, or the connection
  /// broke); a handler waiting on its request checks this.
  bool clientGone() const;
  /// Whether the connection can take another request afterwards.
  bool reusable() const { return keepAlive && !broken; }
  int statusSent() const { return sentStatus; }

private:
  bool send(llvm::StringRef bytes);

  int socket;
  bool keepAlive;
  bool broken = false;
  int sentStatus = 0;
};

using HttpHandler =
    std::function<void(const HttpRequest &request, HttpResponder &responder)>;

class HttpServer {
public:
  ~HttpServer();

  /// Listens on `host`:`port` (0: a port the system chooses).
  /// [ListenFailed] names the address and why.
  static llvm::Expected<std::unique_ptr<HttpServer>>
  listen(llvm::StringRef host, uint16_t port, HttpLimits limits,
         size_t maxConnections);

  uint16_t port() const { return boundPort; }
  /// Answers connections with `handler` until shutdown().
  void serve(HttpHandler handler);
  /// Ends the open connections (after serve()) and waits at most `limit`
  /// for their threads.
  void closeConnections(std::chrono::seconds limit);
  /// Stops serve(); safe from a signal handler.
  void shutdown();

  /// The answer to bytes that are not a request, as `{"error": ...}`.
  std::function<std::string(int status, llvm::StringRef message)> malformedBody;

private:
  HttpServer() = default;
  void handleConnection(int socket, const HttpHandler &handler);

  int listener = -1;
  int wakePipe[2] = {-1, -1};
  uint16_t boundPort = 0;
  HttpLimits limits;
  size_t maxConnections = 0;
  std::mutex mutex;
  std::condition_variable idle;
  size_t connections = 0;
  std::set<int> open;
  HttpHandler handler;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_HTTPSERVER_H

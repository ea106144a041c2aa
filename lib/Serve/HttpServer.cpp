//===- HttpServer.cpp - HTTP/1.1 on POSIX sockets, parsed by Boost.Beast --===//
//
// Beast's request_parser is fed the bytes as they arrive; the sockets,
// their timeouts and the thread per connection are POSIX. Writes use
// MSG_NOSIGNAL, so a client that hung up is a failed write, not SIGPIPE.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/HttpServer.h"

#include "linnet/Basic/Errors.h"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "llvm/ADT/StringExtras.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace linnet;
using namespace linnet::serve;
namespace http = boost::beast::http;

namespace {
/// How long a connection may sit idle between requests, take to send one,
/// or take to read what is sent to it.
constexpr int kIdleMilliseconds = 30000;
constexpr int kRequestMilliseconds = 30000;
constexpr int kWriteMilliseconds = 30000;
} // namespace

llvm::StringRef HttpRequest::header(llvm::StringRef name) const {
  for (const auto &[key, value] : headers)
    if (key == name)
      return value;
  return {};
}

struct HttpRequestReader::Parser {
  http::request_parser<http::string_body> parser;
};

HttpRequestReader::HttpRequestReader(HttpLimits limits) : limits(limits) {}
HttpRequestReader::~HttpRequestReader() = default;

HttpRequestReader::Status HttpRequestReader::feed(llvm::StringRef bytes) {
  buffer.append(bytes.begin(), bytes.end());
  return parse();
}

HttpRequestReader::Status HttpRequestReader::parse() {
  if (!parser) {
    parser = std::make_unique<Parser>();
    parser->parser.header_limit(uint32_t(limits.headerBytes));
    parser->parser.body_limit(limits.bodyBytes);
    parser->parser.eager(true);
  }
  while (!buffer.empty() && !parser->parser.is_done()) {
    boost::beast::error_code error;
    size_t used = parser->parser.put(
        boost::asio::buffer(buffer.data(), buffer.size()), error);
    buffer.erase(0, used);
    if (used)
      started = true;
    if (error == http::error::need_more)
      return Status::NeedMore;
    if (error) {
      status = error == http::error::body_limit     ? 413
               : error == http::error::header_limit ? 431
                                                    : 400;
      message = status == 413 ? "the request body is larger than " +
                                    std::to_string(limits.bodyBytes) + " bytes"
                : status == 431
                    ? "the request's headers are larger than " +
                          std::to_string(limits.headerBytes) + " bytes"
                    : "not an HTTP/1.1 request: " + error.message();
      return Status::Invalid;
    }
    if (used == 0)
      return Status::NeedMore;
  }
  return parser->parser.is_done() ? Status::Complete : Status::NeedMore;
}

HttpRequest HttpRequestReader::take() {
  HttpRequest request;
  auto &message = parser->parser.get();
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.path = llvm::StringRef(request.target).split('?').first.str();
  for (const auto &field : message)
    request.headers.emplace_back(
        llvm::StringRef(field.name_string().data(), field.name_string().size())
            .lower(),
        std::string(field.value()));
  request.body = std::move(message.body());
  request.keepAlive = message.keep_alive();
  parser.reset();
  started = false;
  return request;
}

namespace {
llvm::StringRef reasonPhrase(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 408:
    return "Request Timeout";
  case 413:
    return "Payload Too Large";
  case 429:
    return "Too Many Requests";
  case 431:
    return "Request Header Fields Too Large";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  default:
    return "Unknown";
  }
}

/// Waits up to `milliseconds` for `events` on `socket`; the events seen.
short waitFor(int socket, short events, int milliseconds) {
  pollfd entry{socket, events, 0};
  int ready;
  do
    ready = ::poll(&entry, 1, milliseconds);
  while (ready < 0 && errno == EINTR);
  return ready > 0 ? entry.revents : 0;
}
} // namespace

bool HttpResponder::send(llvm::StringRef bytes) {
  while (!broken && !bytes.empty()) {
    ssize_t sent = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes = bytes.drop_front(size_t(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR)
      continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
        (waitFor(socket, POLLOUT, kWriteMilliseconds) & POLLOUT))
      continue;
    // A client that reads nothing for that long, or hung up.
    broken = true;
  }
  return !broken;
}

void HttpResponder::respond(
    int status, llvm::StringRef contentType, llvm::StringRef body,
    const std::vector<std::pair<std::string, std::string>> &headers) {
  sentStatus = status;
  std::string head =
      "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status).str() +
      "\r\nContent-Type: " + contentType.str() +
      "\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: " + (keepAlive ? "keep-alive" : "close") + "\r\n";
  for (const auto &[name, value] : headers)
    head += name + ": " + value + "\r\n";
  head += "\r\n";
  send(head + body.str());
}

bool HttpResponder::startEvents() {
  sentStatus = 200;
  return send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
              "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n"
              "Connection: " +
              std::string(keepAlive ? "keep-alive" : "close") + "\r\n\r\n");
}

bool HttpResponder::sendEvent(llvm::StringRef data) {
  std::string event = "data: " + data.str() + "\n\n";
  return send(llvm::utohexstr(event.size()) + "\r\n" + event + "\r\n");
}

void HttpResponder::endEvents() { send("0\r\n\r\n"); }

bool HttpResponder::clientGone() const {
  if (broken)
    return true;
  short events = waitFor(socket, POLLIN | POLLRDHUP, 0);
  return events & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL);
}

HttpServer::~HttpServer() {
  if (listener >= 0)
    ::close(listener);
  for (int end : wakePipe)
    if (end >= 0)
      ::close(end);
}

llvm::Expected<std::unique_ptr<HttpServer>>
HttpServer::listen(llvm::StringRef host, uint16_t port, HttpLimits limits,
                   size_t maxConnections) {
  std::string where = host.str() + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo *found = nullptr;
  std::string service = std::to_string(port);
  if (int code =
          ::getaddrinfo(host.str().c_str(), service.c_str(), &hints, &found))
    return makeError(ErrorId::ListenFailed, "--host: cannot listen on `" +
                                                where +
                                                "`: " + ::gai_strerror(code));
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->limits = limits;
  server->maxConnections = maxConnections;
  std::string problem = "no address";
  bool portProblem = false;
  for (addrinfo *address = found; address; address = address->ai_next) {
    int fd = ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC,
                      address->ai_protocol);
    if (fd < 0) {
      problem = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, address->ai_addr, address->ai_addrlen) == 0 &&
        ::listen(fd, 128) == 0) {
      server->listener = fd;
      break;
    }
    problem = std::strerror(errno);
    portProblem = errno == EADDRINUSE || errno == EACCES;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (server->listener < 0)
    return makeError(ErrorId::ListenFailed,
                     std::string(portProblem ? "--port" : "--host") +
                         ": cannot listen on `" + where + "`: " + problem);
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(server->listener, reinterpret_cast<sockaddr *>(&bound),
                &length);
  server->boundPort =
      ntohs(bound.ss_family == AF_INET6
                ? reinterpret_cast<sockaddr_in6 *>(&bound)->sin6_port
                : reinterpret_cast<sockaddr_in *>(&bound)->sin_port);
  if (::pipe2(server->wakePipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return makeError(ErrorId::ListenFailed,
                     "cannot make the server's pipe: " +
                         llvm::Twine(std::strerror(errno)));
  return server;
}

void HttpServer::shutdown() {
  char byte = 0;
  [[maybe_unused]] ssize_t written = ::write(wakePipe[1], &byte, 1);
}

void HttpServer::serve(HttpHandler handler) {
  this->handler = std::move(handler);
  for (;;) {
    pollfd entries[2] = {{listener, POLLIN, 0}, {wakePipe[0], POLLIN, 0}};
    int ready = ::poll(entries, 2, -1);
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready < 0 || entries[1].revents)
      break;
    int socket = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (socket < 0)
      continue;
    int yes = 1;
    ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (connections >= maxConnections) {
        HttpResponder responder(socket, false);
        responder.respond(
            503, "application/json",
            malformedBody(503, "the server has " +
                                   std::to_string(maxConnections) +
                                   " connections open already"));
        ::close(socket);
        continue;
      }
      ++connections;
      open.insert(socket);
    }
    std::thread([this, socket] {
      handleConnection(socket, this->handler);
      std::lock_guard<std::mutex> lock(mutex);
      open.erase(socket);
      ::close(socket);
      if (--connections == 0)
        idle.notify_all();
    }).detach();
  }
}

void HttpServer::closeConnections(std::chrono::seconds limit) {
  std::unique_lock<std::mutex> lock(mutex);
  // A connection waiting for its next request reads the end at once; one
  // whose handler still runs sees its client gone.
  for (int socket : open)
    ::shutdown(socket, SHUT_RD);
  idle.wait_for(lock, limit, [&] { return connections == 0; });
}

void HttpServer::handleConnection(int socket, const HttpHandler &handler) {
  HttpRequestReader reader(limits);
  char chunk[16384];
  for (;;) {
    // A request: the first byte within the idle time, the rest within the
    // request time.
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(kRequestMilliseconds);
    HttpRequestReader::Status status = reader.feed({});
    while (status == HttpRequestReader::Status::NeedMore) {
      int wait = kIdleMilliseconds;
      if (reader.midRequest())
        wait = int(std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(
                   deadline - std::chrono::steady_clock::now())
                   .count()));
      if (!(waitFor(socket, POLLIN, wait) & (POLLIN | POLLHUP | POLLERR))) {
        if (reader.midRequest()) {
          HttpResponder responder(socket, false);
          responder.respond(408, "application/json",
                            malformedBody(408, "the request did not arrive "
                                               "whole in time"));
        }
        return;
      }
      ssize_t got = ::recv(socket, chunk, sizeof chunk, 0);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return;
      status = reader.feed(llvm::StringRef(chunk, size_t(got)));
    }
    if (status == HttpRequestReader::Status::Invalid) {
      HttpResponder responder(socket, false);
      responder.respond(
          reader.errorStatus(), "application/json",
          malformedBody(reader.errorStatus(), reader.errorMessage()));
      return;
    }
    HttpRequest request = reader.take();
    HttpResponder responder(socket, request.keepAlive);
    handler(request, responder);
    if (!responder.reusable())
      return;
  }
}

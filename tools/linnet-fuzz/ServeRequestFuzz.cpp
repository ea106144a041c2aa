//===- ServeRequestFuzz.cpp - libFuzzer target for the server's input -----===//
//
// What a client sends the server: bytes read as HTTP/1.1 requests (fed in
// pieces, as a socket delivers them, several requests one after another),
// then each request's body read as a chat and as a text completion request,
// and the body again as a reply whose reasoning and tool calls are split
// out. A request the reader accepts must hold what its limits allow; every
// refusal must be an error, never a crash or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/CompletionRequest.h"
#include "linnet/Serve/HttpServer.h"
#include "linnet/Serve/ReplyParser.h"

#include <cstdlib>

using namespace linnet;
using namespace linnet::serve;

namespace {

void readBody(llvm::StringRef body) {
  for (bool chat : {true, false}) {
    auto request = parseCompletionRequest(body, chat);
    if (!request) {
      llvm::consumeError(request.takeError());
      continue;
    }
    if (request->n < 1 || request->n > kMaxChoices ||
        request->stop.size() > kMaxStopStrings ||
        request->topLogprobs > kMaxTopLogprobs)
      std::abort(); // a request past the limits the parser enforces
    if (chat && request->chatInput.messages.items->empty())
      std::abort();
  }
  // The same bytes as a reply, pushed in two pieces and whole.
  for (bool thinking : {false, true}) {
    ReplyParser pieces(thinking, /*tools=*/true);
    size_t half = body.size() / 2;
    ReplyDelta first = pieces.push(body.take_front(half));
    ReplyDelta second = pieces.push(body.drop_front(half));
    ReplyDelta last = pieces.finish();
    size_t text = first.reasoning.size() + first.content.size() +
                  second.reasoning.size() + second.content.size() +
                  last.reasoning.size() + last.content.size();
    if (text > body.size())
      std::abort(); // the parser only ever drops tags
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  HttpLimits limits;
  limits.headerBytes = 2048;
  limits.bodyBytes = 8192;
  HttpRequestReader reader(limits);
  // Pieces of 7 bytes: requests split anywhere, as TCP may split them.
  for (size_t start = 0; start < bytes.size(); start += 7) {
    HttpRequestReader::Status status = reader.feed(bytes.substr(start, 7));
    while (status == HttpRequestReader::Status::Complete) {
      HttpRequest request = reader.take();
      if (request.body.size() > limits.bodyBytes)
        std::abort(); // a body past the limit was accepted
      readBody(request.body);
      status = reader.feed({});
    }
    if (status == HttpRequestReader::Status::Invalid) {
      int answer = reader.errorStatus();
      if (answer != 400 && answer != 413 && answer != 431)
        std::abort();
      break;
    }
  }
  // The bytes as a body alone.
  readBody(bytes);
  return 0;
}

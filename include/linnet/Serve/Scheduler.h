//===- Scheduler.h - Continuous batching over state rows --------*- C++ -*-===//
//
// A server answers many requests with one model whose state has `Batch`
// rows (slots). One scheduler loop owns the model: it starts waiting
// requests in free slots with `prefill_slots` (several in one call, within
// a token budget, so that decoding rows wait at most one such call), steps
// every active row with `decode_rows` each iteration, each at its own
// position, and ends rows independently (an end-of-sequence id, a stop
// string, the token limit, the cache's end, or a client that left). A row
// may also be fed tokens it did not choose, one a step: the rest of a
// prompt after a restored prefix snapshot (PrefixCache). A request for `n`
// choices prefills its prompt once and copies the state row into the other
// choices' slots.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_SCHEDULER_H
#define LINNET_SERVE_SCHEDULER_H

#include "linnet/Runtime/Sampler.h"
#include "linnet/Runtime/Session.h"
#include "linnet/Serve/PrefixCache.h"
#include "linnet/Serve/ServerMetrics.h"
#include "linnet/Text/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace linnet::serve {

/// What one request asks the model for.
struct GenerationRequest {
  std::vector<int32_t> prompt;
  unsigned maxTokens = 16;
  /// Choice `i` samples with `sampling.seed + i`.
  SamplingOptions sampling;
  unsigned choices = 1;
  std::vector<std::string> stopStrings;
  /// Ids that end a choice, unprinted (generation_config.json's).
  std::vector<int32_t> stopIds;
  /// The most likely tokens reported with each generated one (0: none);
  /// `logprobs` asks for the chosen token's log-probability.
  bool logprobs = false;
  unsigned topLogprobs = 0;
  /// A token count where a snapshot of the state is worth keeping (the end
  /// of a chat's earlier turns), if any.
  std::optional<size_t> cacheBoundary;
};

/// A token's log-probability under the model (its raw logits).
struct TokenLogprob {
  int32_t id = 0;
  double logprob = 0;
};

/// What the scheduler tells a request, in order.
struct GenerationEvent {
  enum Kind { Token, Finish, Failure } kind = Token;
  unsigned choice = 0;
  /// Token: the id, the text it completes (possibly empty: a character
  /// split across tokens, or held back as the start of a stop string).
  int32_t id = 0;
  std::string text;
  std::optional<TokenLogprob> logprob;
  std::vector<TokenLogprob> top;
  /// Finish: `stop` or `length`, with the text the stop matcher still held,
  /// and how many tokens the choice generated (an end-of-sequence id too).
  std::string finishReason;
  unsigned generated = 0;
  /// Failure: why the request could not be served.
  std::string error;
};

/// One request's place in the scheduler, shared with the thread that
/// answers it.
class RequestChannel {
public:
  /// The next event, waiting at most `timeout`; none on a timeout.
  std::optional<GenerationEvent> next(std::chrono::milliseconds timeout);
  /// The client is gone: the scheduler frees its slots at its next step.
  void cancel() { cancelled = true; }
  bool isCancelled() const { return cancelled; }

  /// Counts the scheduler reports back.
  size_t promptTokens = 0, cachedTokens = 0;

private:
  friend class Scheduler;
  void push(GenerationEvent event);

  std::mutex mutex;
  std::condition_variable ready;
  std::deque<GenerationEvent> events;
  std::atomic<bool> cancelled{false};
};

/// Calls one entry (`prefill_slots` or `decode_rows`) on the session; the
/// logits come back as f32, one row of `Vocab` per call row.
using EntryCaller = std::function<llvm::Error(const EntryCall &call,
                                              std::vector<float> &logits)>;

struct SchedulerOptions {
  /// The most requests waiting for a slot; more are refused (HTTP 429).
  size_t maxQueue = 64;
  /// The most tokens (rows times padded length) of one `prefill_slots` call:
  /// a bound on how long decoding rows wait for new requests to start.
  size_t prefillBudget = 2048;
  /// The most prompt tokens fed one a step after a restored snapshot; a
  /// longer rest is prefilled from the start instead.
  size_t maxRestAfterSnapshot = 256;
  /// The prefix cache's size in bytes (0: no cache).
  uint64_t prefixCacheBytes = 0;
};

class Scheduler {
public:
  /// `session` and `tokenizer` outlive the scheduler; every row of
  /// `session` is the scheduler's.
  Scheduler(Session &session, const Tokenizer &tokenizer, EntryCaller call,
            ServerMetrics &metrics, SchedulerOptions options);
  ~Scheduler();

  /// Queues `request`; an error when the queue is full [ServerBusy] or the
  /// request cannot fit the cache or the slots.
  llvm::Expected<std::shared_ptr<RequestChannel>>
  submit(GenerationRequest request);

  /// Runs the loop on its own thread until stop().
  void start();
  void stop();

  int64_t slots() const { return sizes.batch; }
  int64_t maxSeq() const { return sizes.maxSeq; }

private:
  struct Pending;
  struct Row;
  void loop();
  /// Starts waiting requests in free slots (one `prefill_slots` call);
  /// false when nothing was started.
  bool admit(std::unique_lock<std::mutex> &lock);
  /// One `decode_rows` step of every active row.
  void step();
  /// Reads row `row`'s logits: the next token, its text, whether it ends.
  void advance(Row &row, const float *logits);
  void finish(Row &row, llvm::StringRef reason);
  void fail(const std::shared_ptr<RequestChannel> &channel,
            const std::string &message);
  /// Keeps slot `slot`'s state (of `tokens`) in the prefix cache.
  void remember(int64_t slot, llvm::ArrayRef<int32_t> tokens);
  void updateGauges();

  Session &session;
  const Tokenizer &tokenizer;
  EntryCaller call;
  ServerMetrics &metrics;
  SchedulerOptions options;
  SessionSizes sizes;
  PrefixCache cache;

  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::unique_ptr<Pending>> queue;
  bool stopping = false;
  /// The rows in use, by slot (null: free); the loop's alone.
  std::vector<std::unique_ptr<Row>> rows;
  std::thread thread;
  std::vector<float> logits;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_SCHEDULER_H

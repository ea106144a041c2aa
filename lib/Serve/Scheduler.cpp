//===- Scheduler.cpp - Continuous batching over a model's state rows ------===//
//
// The loop owns the session: only it calls entries and touches rows. Other
// threads submit requests into a bounded queue and read their events from
// the request's channel. Each iteration starts what fits in the free slots
// (one `prefill_slots` call within the token budget), then steps every
// active row once with `decode_rows`; free rows ride along at position 0,
// their output unread (Session::release).
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/Scheduler.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Serve/ApiError.h"
#include "linnet/Text/StopStrings.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace linnet;
using namespace linnet::serve;

namespace {
using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}
} // namespace

std::optional<GenerationEvent>
RequestChannel::next(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex);
  if (!ready.wait_for(lock, timeout, [&] { return !events.empty(); }))
    return std::nullopt;
  GenerationEvent event = std::move(events.front());
  events.pop_front();
  return event;
}

void RequestChannel::push(GenerationEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(std::move(event));
  }
  ready.notify_one();
}

struct Scheduler::Pending {
  std::shared_ptr<const GenerationRequest> request;
  std::shared_ptr<RequestChannel> channel;
  Clock::time_point arrival;
};

struct Scheduler::Row {
  Row(const Tokenizer &tokenizer, const Pending &pending, unsigned choice)
      : request(pending.request), channel(pending.channel), choice(choice),
        arrival(pending.arrival), stream(tokenizer),
        stops(pending.request->stopStrings), sampler([&] {
          SamplingOptions options = pending.request->sampling;
          options.seed += choice;
          return options;
        }()) {}

  std::shared_ptr<const GenerationRequest> request;
  std::shared_ptr<RequestChannel> channel;
  unsigned choice;
  int64_t slot = 0;
  Clock::time_point arrival, lastToken;
  /// The tokens the state row holds.
  std::vector<int32_t> fed;
  /// Prompt tokens still to feed, one a step, before the first sample.
  std::deque<int32_t> forced;
  /// The sampled token the next step feeds.
  std::optional<int32_t> next;
  /// What the penalties read: the prompt, then each generated token.
  std::vector<int32_t> history;
  unsigned generated = 0;
  TextStream stream;
  StopStringMatcher stops;
  Sampler sampler;
};

Scheduler::Scheduler(Session &session, const Tokenizer &tokenizer,
                     EntryCaller call, ServerMetrics &metrics,
                     SchedulerOptions options)
    : session(session), tokenizer(tokenizer), call(std::move(call)),
      metrics(metrics), options(options), sizes(session.sizes()),
      cache(options.prefixCacheBytes), rows(size_t(session.sizes().batch)) {
  for (int64_t slot = 0; slot < sizes.batch; ++slot)
    session.release(slot);
  metrics.totalSlots = sizes.batch;
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::start() {
  thread = std::thread([this] { loop(); });
}

void Scheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  if (thread.joinable())
    thread.join();
}

llvm::Expected<std::shared_ptr<RequestChannel>>
Scheduler::submit(GenerationRequest request) {
  if (request.prompt.empty())
    return ApiError::make(400, "invalid_request_error", "prompt",
                          ErrorId::RequestInvalid,
                          "the prompt is empty; give the text to start from");
  for (int32_t id : request.prompt)
    if (id < 0 || id >= sizes.vocab)
      return ApiError::make(400, "invalid_request_error", "prompt",
                            ErrorId::TokenOutOfVocabulary,
                            "token id " + std::to_string(id) +
                                " is outside the model's vocabulary [0, " +
                                std::to_string(sizes.vocab) + ")");
  if (int64_t(request.prompt.size()) > sizes.maxSeq)
    return ApiError::make(
        400, "invalid_request_error", "messages", ErrorId::ContextTooLong,
        "the prompt's " + std::to_string(request.prompt.size()) +
            " tokens do not fit the context of " +
            std::to_string(sizes.maxSeq) + " tokens (`MaxSeq`)");
  if (request.choices < 1 || int64_t(request.choices) > sizes.batch)
    return ApiError::make(
        400, "invalid_request_error", "n", ErrorId::RequestInvalid,
        "`n` is " + std::to_string(request.choices) +
            "; this server runs 1 to " + std::to_string(sizes.batch) +
            " choices of a request (its slots, `Batch`)");
  auto pending = std::make_unique<Pending>();
  pending->channel = std::make_shared<RequestChannel>();
  pending->channel->promptTokens = request.prompt.size();
  pending->arrival = Clock::now();
  pending->request =
      std::make_shared<const GenerationRequest>(std::move(request));
  std::shared_ptr<RequestChannel> channel = pending->channel;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (queue.size() >= options.maxQueue)
      return ApiError::make(429, "rate_limit_exceeded", "", ErrorId::ServerBusy,
                            "the server's queue holds " +
                                std::to_string(options.maxQueue) +
                                " waiting requests already; try again later");
    queue.push_back(std::move(pending));
    metrics.queued = int64_t(queue.size());
  }
  wake.notify_one();
  return channel;
}

void Scheduler::fail(const std::shared_ptr<RequestChannel> &channel,
                     const std::string &message) {
  GenerationEvent event;
  event.kind = GenerationEvent::Failure;
  event.error = message;
  channel->push(std::move(event));
}

void Scheduler::updateGauges() {
  metrics.activeSlots =
      int64_t(llvm::count_if(rows, [](const auto &row) { return bool(row); }));
  metrics.prefixCacheBytes = cache.bytes();
  metrics.prefixCacheEntries = cache.entries();
}

void Scheduler::loop() {
  for (;;) {
    std::unique_lock<std::mutex> lock(mutex);
    bool active = llvm::any_of(rows, [](const auto &row) { return bool(row); });
    if (!active)
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
    if (stopping)
      break;
    admit(lock);
    if (lock.owns_lock())
      lock.unlock();
    // A client that left frees its rows now.
    for (auto &row : rows)
      if (row && row->channel->isCancelled()) {
        session.release(row->slot);
        row.reset();
      }
    updateGauges();
    if (llvm::any_of(rows, [](const auto &row) { return bool(row); }))
      step();
    updateGauges();
  }
  // Requests still queued or running hear that the server stopped.
  for (auto &row : rows)
    if (row)
      fail(row->channel, "the server is shutting down");
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &pending : queue)
    fail(pending->channel, "the server is shutting down");
}

bool Scheduler::admit(std::unique_lock<std::mutex> &lock) {
  // A row to prefill: its request's first choice, the tokens it prefills,
  // the rest it feeds a step at a time.
  struct Start {
    std::unique_ptr<Pending> pending;
    std::vector<int64_t> slots;
    /// The snapshot restored, or the tokens prefilled.
    const RowSnapshot *snapshot = nullptr;
    size_t prefillLength = 0;
  };
  std::vector<Start> starts;
  size_t coldRows = 0, longest = 0;
  std::vector<bool> taken(rows.size(), false);
  auto freeSlots = [&] {
    std::vector<int64_t> slots;
    for (size_t slot = 0; slot < rows.size(); ++slot)
      if (!rows[slot] && !taken[slot])
        slots.push_back(int64_t(slot));
    return slots;
  };
  while (!queue.empty()) {
    Pending &pending = *queue.front();
    if (pending.channel->isCancelled()) {
      queue.pop_front();
      continue;
    }
    const GenerationRequest &request = *pending.request;
    std::vector<int64_t> slots = freeSlots();
    if (slots.size() < request.choices)
      break;
    slots.resize(request.choices);
    size_t length = 0;
    const RowSnapshot *snapshot =
        cache.enabled()
            ? cache.lookup(request.prompt, options.maxRestAfterSnapshot)
            : nullptr;
    if (!snapshot) {
      length = request.prompt.size();
      // Stop at the chat's boundary to keep a snapshot there, when the rest
      // is short enough to feed a step at a time.
      if (cache.enabled() && request.cacheBoundary &&
          *request.cacheBoundary > 0 &&
          *request.cacheBoundary < request.prompt.size() &&
          request.prompt.size() - *request.cacheBoundary <=
              options.maxRestAfterSnapshot &&
          !cache.contains(llvm::ArrayRef<int32_t>(request.prompt)
                              .take_front(*request.cacheBoundary)))
        length = *request.cacheBoundary;
      size_t widest = std::max(longest, length);
      if (coldRows > 0 && (coldRows + 1) * widest > options.prefillBudget)
        break;
      ++coldRows;
      longest = widest;
    }
    for (int64_t slot : slots)
      taken[size_t(slot)] = true;
    starts.push_back(
        {std::move(queue.front()), std::move(slots), snapshot, length});
    queue.pop_front();
  }
  metrics.queued = int64_t(queue.size());
  lock.unlock();
  if (starts.empty())
    return false;

  // Every choice's row, fed what the state does not hold yet.
  auto makeRows = [&](Start &start) {
    for (auto [choice, slot] : llvm::enumerate(start.slots)) {
      auto row =
          std::make_unique<Row>(tokenizer, *start.pending, unsigned(choice));
      row->slot = slot;
      row->history = start.pending->request->prompt;
      rows[size_t(slot)] = std::move(row);
    }
  };
  EntryCall prefill;
  prefill.entry = EntryKind::PrefillSlots;
  prefill.length = int64_t(longest);
  std::vector<Start *> prefilled;
  for (Start &start : starts) {
    const std::vector<int32_t> &prompt = start.pending->request->prompt;
    makeRows(start);
    if (const RowSnapshot *snapshot = start.snapshot) {
      ++metrics.prefixHits;
      metrics.prefixSavedTokens += uint64_t(snapshot->count);
      start.pending->channel->cachedTokens = size_t(snapshot->count);
      for (int64_t slot : start.slots) {
        Row &row = *rows[size_t(slot)];
        session.restore(slot, *snapshot);
        row.fed.assign(prompt.begin(), prompt.begin() + snapshot->count);
        row.forced.assign(prompt.begin() + snapshot->count, prompt.end());
      }
      continue;
    }
    if (cache.enabled())
      ++metrics.prefixMisses;
    prefilled.push_back(&start);
    prefill.slots.push_back(int32_t(start.slots.front()));
    prefill.lengths.push_back(int32_t(start.prefillLength));
    prefill.tokens.insert(prefill.tokens.end(), prompt.begin(),
                          prompt.begin() + int64_t(start.prefillLength));
    prefill.tokens.insert(prefill.tokens.end(), longest - start.prefillLength,
                          0);
  }
  metrics.promptTokens +=
      std::accumulate(starts.begin(), starts.end(), uint64_t(0),
                      [](uint64_t sum, const Start &start) {
                        return sum + start.pending->request->prompt.size();
                      });
  if (prefilled.empty())
    return true;
  prefill.rows = int64_t(prefilled.size());
  ++metrics.prefillCalls;
  if (llvm::Error error = call(prefill, logits)) {
    std::string message = llvm::toString(std::move(error));
    for (Start *start : prefilled) {
      fail(start->pending->channel, message);
      for (int64_t slot : start->slots) {
        session.release(slot);
        rows[size_t(slot)].reset();
      }
    }
    return true;
  }
  for (auto [m, start] : llvm::enumerate(prefilled)) {
    const std::vector<int32_t> &prompt = start->pending->request->prompt;
    int64_t first = start->slots.front();
    if (start->prefillLength < prompt.size())
      remember(first, llvm::ArrayRef<int32_t>(prompt).take_front(
                          start->prefillLength));
    for (int64_t slot : start->slots) {
      if (slot != first)
        session.copyRow(first, slot);
      Row &row = *rows[size_t(slot)];
      row.fed.assign(prompt.begin(),
                     prompt.begin() + int64_t(start->prefillLength));
      row.forced.assign(prompt.begin() + int64_t(start->prefillLength),
                        prompt.end());
      if (row.forced.empty())
        advance(row, logits.data() + m * size_t(sizes.vocab));
    }
  }
  return true;
}

void Scheduler::step() {
  EntryCall decode;
  decode.entry = EntryKind::DecodeRows;
  decode.rows = sizes.batch;
  decode.length = 1;
  decode.tokens.assign(size_t(sizes.batch), 0);
  decode.positions.assign(size_t(sizes.batch), 0);
  for (auto &row : rows) {
    if (!row)
      continue;
    decode.tokens[size_t(row->slot)] =
        row->forced.empty() ? *row->next : row->forced.front();
    decode.positions[size_t(row->slot)] =
        int32_t(session.counts()[size_t(row->slot)]);
  }
  ++metrics.decodeSteps;
  if (llvm::Error error = call(decode, logits)) {
    std::string message = llvm::toString(std::move(error));
    for (auto &row : rows)
      if (row) {
        fail(row->channel, message);
        session.release(row->slot);
        row.reset();
      }
    return;
  }
  for (auto &row : rows) {
    if (!row)
      continue;
    int32_t token = decode.tokens[size_t(row->slot)];
    row->fed.push_back(token);
    if (!row->forced.empty()) {
      row->forced.pop_front();
      if (!row->forced.empty())
        continue;
    }
    advance(*row, logits.data() + size_t(row->slot) * size_t(sizes.vocab));
  }
}

void Scheduler::advance(Row &row, const float *rowLogits) {
  const GenerationRequest &request = *row.request;
  GenerationEvent event;
  event.choice = row.choice;
  int32_t id = row.sampler.sample(rowLogits, sizes.vocab, row.history);
  event.id = id;
  if (request.logprobs || request.topLogprobs) {
    // Log-probabilities of the raw logits (as vLLM reports by default).
    float largest = *std::max_element(rowLogits, rowLogits + sizes.vocab);
    double sum = 0;
    for (int64_t i = 0; i < sizes.vocab; ++i)
      sum += std::exp(double(rowLogits[i]) - largest);
    double logSum = std::log(sum) + largest;
    event.logprob = TokenLogprob{id, double(rowLogits[id]) - logSum};
    if (request.topLogprobs) {
      std::vector<int32_t> order(size_t(sizes.vocab));
      std::iota(order.begin(), order.end(), 0);
      size_t count = std::min<size_t>(request.topLogprobs, order.size());
      std::partial_sort(order.begin(), order.begin() + int64_t(count),
                        order.end(), [&](int32_t a, int32_t b) {
                          return rowLogits[a] > rowLogits[b] ||
                                 (rowLogits[a] == rowLogits[b] && a < b);
                        });
      for (size_t i = 0; i < count; ++i)
        event.top.push_back(
            TokenLogprob{order[i], double(rowLogits[order[i]]) - logSum});
    }
  }
  Clock::time_point now = Clock::now();
  if (row.generated == 0)
    metrics.timeToFirstToken.observe(secondsBetween(row.arrival, now));
  else
    metrics.interTokenLatency.observe(secondsBetween(row.lastToken, now));
  row.lastToken = now;
  ++row.generated;
  ++metrics.generatedTokens;
  row.history.push_back(id);
  if (llvm::is_contained(request.stopIds, id))
    return finish(row, "stop");
  if (id < tokenizer.vocabularySize() && !tokenizer.tokenBytes(id).empty()) {
    auto text = row.stream.push(id);
    if (!text) {
      fail(row.channel, llvm::toString(text.takeError()));
      session.release(row.slot);
      rows[size_t(row.slot)].reset();
      return;
    }
    event.text = row.stops.push(*text);
  }
  row.channel->push(std::move(event));
  if (row.stops.stopped())
    return finish(row, "stop");
  // The next step would feed `id` at the row's count: past the cache's end
  // there is no room for it.
  if (row.generated >= request.maxTokens ||
      session.counts()[size_t(row.slot)] >= sizes.maxSeq)
    return finish(row, "length");
  row.next = id;
}

void Scheduler::remember(int64_t slot, llvm::ArrayRef<int32_t> tokens) {
  if (!cache.enabled() || tokens.empty() || cache.contains(tokens))
    return;
  cache.insert(tokens, session.snapshot(slot));
}

void Scheduler::finish(Row &row, llvm::StringRef reason) {
  GenerationEvent event;
  event.kind = GenerationEvent::Finish;
  event.choice = row.choice;
  event.finishReason = reason.str();
  event.generated = row.generated;
  if (!row.stops.stopped()) {
    event.text = row.stops.push(row.stream.finish());
    event.text += row.stops.finish();
  }
  metrics.requestLatency.observe(secondsBetween(row.arrival, Clock::now()));
  // The state holds `fed`: a follow-up that starts with the same tokens
  // (the reply, then a new message) continues from here.
  remember(row.slot, row.fed);
  row.channel->push(std::move(event));
  int64_t slot = row.slot;
  session.release(slot);
  rows[size_t(slot)].reset();
}

//===- ServerMetrics.cpp - What /metrics reports --------------------------===//
//
// Names follow Prometheus' conventions (`_total` counters, `_seconds`
// histograms) under the `linnet_` prefix.
//
//===----------------------------------------------------------------------===//

#include "linnet/Serve/ServerMetrics.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace linnet::serve;

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds(std::move(bounds)), counts(this->bounds.size() + 1, 0) {}

void LatencyHistogram::observe(double seconds) {
  std::lock_guard<std::mutex> lock(mutex);
  size_t bucket = 0;
  while (bucket < bounds.size() && seconds > bounds[bucket])
    ++bucket;
  ++counts[bucket];
  sum += seconds;
  ++count;
}

void LatencyHistogram::print(std::string &out, llvm::StringRef name,
                             llvm::StringRef help) const {
  std::lock_guard<std::mutex> lock(mutex);
  llvm::raw_string_ostream os(out);
  os << "# HELP " << name << " " << help << "\n# TYPE " << name
     << " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += counts[i];
    os << name << "_bucket{le=\"" << llvm::format("%g", bounds[i]) << "\"} "
       << cumulative << "\n";
  }
  cumulative += counts.back();
  os << name << "_bucket{le=\"+Inf\"} " << cumulative << "\n";
  os << name << "_sum " << llvm::format("%.6f", sum) << "\n";
  os << name << "_count " << count << "\n";
}

namespace {
std::vector<double> latencyBounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60};
}
} // namespace

ServerMetrics::ServerMetrics()
    : timeToFirstToken(latencyBounds()), interTokenLatency(latencyBounds()),
      requestLatency(latencyBounds()) {}

void ServerMetrics::countRequest(llvm::StringRef endpoint, int status) {
  std::lock_guard<std::mutex> lock(mutex);
  ++requests[{endpoint.str(), status}];
}

std::string ServerMetrics::render() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto counter = [&](llvm::StringRef name, llvm::StringRef help,
                     uint64_t value) {
    os << "# HELP " << name << " " << help << "\n# TYPE " << name
       << " counter\n"
       << name << " " << value << "\n";
  };
  auto gauge = [&](llvm::StringRef name, llvm::StringRef help, int64_t value) {
    os << "# HELP " << name << " " << help << "\n# TYPE " << name << " gauge\n"
       << name << " " << value << "\n";
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    os << "# HELP linnet_requests_total HTTP requests answered, by endpoint "
          "and status\n# TYPE linnet_requests_total counter\n";
    for (const auto &[key, value] : requests)
      os << "linnet_requests_total{endpoint=\"" << key.first << "\",status=\""
         << key.second << "\"} " << value << "\n";
  }
  counter("linnet_prompt_tokens_total", "Prompt tokens of accepted requests",
          promptTokens);
  counter("linnet_generation_tokens_total", "Tokens generated",
          generatedTokens);
  counter("linnet_prefix_cache_hits_total",
          "Requests started from a cached state snapshot", prefixHits);
  counter("linnet_prefix_cache_misses_total",
          "Requests prefilled from their first token", prefixMisses);
  counter("linnet_prefix_cache_saved_tokens_total",
          "Prompt tokens not prefilled thanks to a snapshot",
          prefixSavedTokens);
  counter("linnet_prefill_calls_total", "prefill_slots calls", prefillCalls);
  counter("linnet_decode_steps_total", "decode_rows calls", decodeSteps);
  gauge("linnet_queue_requests", "Requests waiting for a slot", queued);
  gauge("linnet_slots_active", "State slots holding a request", activeSlots);
  gauge("linnet_slots_total", "State slots (the bound Batch)", totalSlots);
  gauge("linnet_prefix_cache_bytes", "Bytes held by state snapshots",
        int64_t(prefixCacheBytes.load()));
  gauge("linnet_prefix_cache_entries", "State snapshots held",
        int64_t(prefixCacheEntries.load()));
  os.flush();
  timeToFirstToken.print(out, "linnet_time_to_first_token_seconds",
                         "From a request's arrival to its first token");
  interTokenLatency.print(out, "linnet_inter_token_latency_seconds",
                          "Between consecutive tokens of a choice");
  requestLatency.print(out, "linnet_request_duration_seconds",
                       "From a request's arrival to its last token");
  return out;
}

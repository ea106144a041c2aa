//===- ServerMetrics.h - What /metrics reports ------------------*- C++ -*-===//
//
// Operators scrape a server's counters and latency histograms the way vLLM
// and llama-server expose them: requests by endpoint and status, prompt and
// generated tokens, the queue and the slots in use, prefix-cache hits and
// the prompt tokens they saved, and histograms of the time to the first
// token, between tokens and of whole requests. Every member is safe to
// update from any thread.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_SERVE_SERVERMETRICS_H
#define LINNET_SERVE_SERVERMETRICS_H

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace linnet::serve {

/// A Prometheus histogram of seconds with fixed bucket bounds.
class LatencyHistogram {
public:
  explicit LatencyHistogram(std::vector<double> bounds);
  void observe(double seconds);
  /// The `_bucket`, `_sum` and `_count` lines of `name`.
  void print(std::string &out, llvm::StringRef name,
             llvm::StringRef help) const;

private:
  std::vector<double> bounds;
  mutable std::mutex mutex;
  std::vector<uint64_t> counts; ///< per bound, then +Inf
  double sum = 0;
  uint64_t count = 0;
};

struct ServerMetrics {
  ServerMetrics();

  /// A request answered on `endpoint` with HTTP status `status`.
  void countRequest(llvm::StringRef endpoint, int status);

  std::atomic<uint64_t> promptTokens{0}, generatedTokens{0};
  std::atomic<uint64_t> prefixHits{0}, prefixMisses{0}, prefixSavedTokens{0};
  std::atomic<uint64_t> prefillCalls{0}, decodeSteps{0};
  std::atomic<int64_t> queued{0}, activeSlots{0}, totalSlots{0};
  std::atomic<uint64_t> prefixCacheBytes{0}, prefixCacheEntries{0};
  LatencyHistogram timeToFirstToken, interTokenLatency, requestLatency;

  /// Everything, in Prometheus' text exposition format.
  std::string render() const;

private:
  mutable std::mutex mutex;
  std::map<std::pair<std::string, int>, uint64_t> requests;
};

} // namespace linnet::serve

#endif // LINNET_SERVE_SERVERMETRICS_H

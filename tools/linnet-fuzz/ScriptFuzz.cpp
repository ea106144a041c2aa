//===- ScriptFuzz.cpp - libFuzzer target for run scripts ------------------===//
//
// Feeds arbitrary bytes to parseScript, which reads `linnet run --script`
// files, and then checks the calls as `linnet run` does before compiling
// anything: against the sizes of a small model, one call after another,
// each accepted call advancing the rows' token counts. A session with a
// state per slot follows the calls (prefill_slots resets its slots), so
// that a call the checks accept but that would index outside the state
// is a finding, like any crash or sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Session.h"

#include <cstdlib>

using namespace linnet;

namespace {

/// One state member of `[Batch, 4] f32`.
std::vector<ModelParameter> statesOf(const SessionSizes &sizes) {
  ModelParameter state;
  state.path = "layer.cache";
  state.shape = {sizes.batch, 4};
  return {state};
}

void checkCalls(const SessionSizes &sizes, llvm::ArrayRef<EntryCall> calls) {
  auto session = Session::create(sizes, statesOf(sizes));
  if (!session)
    std::abort();
  for (const EntryCall &call : calls) {
    if (llvm::Error error = (*session)->check(call)) {
      llvm::consumeError(std::move(error));
      return;
    }
    if (call.entry == EntryKind::PrefillSlots)
      for (int32_t slot : call.slots)
        (*session)->reset(slot);
    (*session)->finish(call);
    for (int64_t count : (*session)->counts())
      if (count < 0 || count > sizes.maxSeq)
        std::abort(); // an accepted call left a row outside the cache
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto calls = parseScript(text, "script.json");
  if (!calls) {
    llvm::consumeError(calls.takeError());
    return 0;
  }
  for (const EntryCall &call : *calls)
    if (call.rows < 1 || call.length < 1 ||
        int64_t(call.tokens.size()) != call.rows * call.length)
      std::abort(); // parseScript promises rows of equal, positive length
  // The sizes of the tests' small model, with one slot and with two.
  checkCalls({/*batch=*/2, /*maxSeq=*/8, /*vocab=*/64}, *calls);
  checkCalls({/*batch=*/1, /*maxSeq=*/16, /*vocab=*/32}, *calls);
  return 0;
}

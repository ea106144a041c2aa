//===- ScriptRunner.cpp - `linnet run --script` and `--generate` ----------===//
//
// The stateful modes of `linnet run`: a script of entry calls against one
// session (the model's state persisting from call to call), and greedy
// generation (prefill, then decode). Both check every call against the
// bound sizes and the simulated row counts before the model is compiled, so
// a mistake in a script costs no compile time and runs nothing; then they
// compile every entry they use once and call it through the JIT with the
// weights, the session's states and the call's arguments.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Runtime/Session.h"
#include "linnet/Target/CPU/CpuExecutable.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace linnet;
using namespace linnet::driver;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// `call 2 (`prefill_slots`), `: where a call's problem is.
std::string callPrefix(size_t index, const EntryCall &call) {
  return "call " + std::to_string(index) + " (`" + entryName(call.entry).str() +
         "`), ";
}

/// Checks `calls` in order against the bound sizes, simulating the counts
/// they leave, and that the model declares every entry they use; reports
/// the first problem with `option` and the call.
bool checkCalls(llvm::StringRef option, const BoundModel &bound,
                llvm::ArrayRef<EntryCall> calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    llvm::StringRef name = entryName(calls[i].entry);
    const MemberDecl *member = bound.root->findMember(name);
    const FnDecl *fn = member ? std::get_if<FnDecl>(member) : nullptr;
    if (!fn || !fn->isEntry) {
      reportError(option + ": " + callPrefix(i, calls[i]) + "`entry`: `" +
                  bound.root->qualifiedName() + "` has no entry `" + name +
                  "`");
      return false;
    }
  }
  auto sizes = SessionSizes::of(bound);
  if (!sizes) {
    reportError(option + ": " + llvm::toString(sizes.takeError()));
    return false;
  }
  RowCounts counts(*sizes);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (llvm::Error error = counts.check(calls[i])) {
      reportError(option + ": " + callPrefix(i, calls[i]) +
                  llvm::toString(std::move(error)));
      return false;
    }
    counts.advance(calls[i]);
  }
  return true;
}

/// A bound, compiled model with its weights and one session: what runs the
/// calls.
struct SessionRunner {
  DriverSession driver;
  CompiledModel compiled;
  std::unique_ptr<ParameterStore> store;
  std::unique_ptr<Session> session;
  std::unique_ptr<CpuExecutable> executable;
  ElementType logitElement = ElementType::F32;
  double loadSeconds = 0;

  /// Loads, checks (`check` once the sizes are bound), loads the checkpoint
  /// and compiles `entries`; reports and returns false on any problem.
  bool prepare(const char *argv0, const RunInputs &inputs,
               llvm::ArrayRef<std::string> entries,
               llvm::function_ref<bool(const BoundModel &)> check) {
    if (!driver.load(argv0, inputs.input, inputs.includeDirs))
      return false;
    auto beforeGeneration = [&](const BoundModel &bound) {
      if (!check(bound))
        return false;
      auto loadStart = std::chrono::steady_clock::now();
      store = loadCheckpoint(driver.program, bound, inputs.checkpoint);
      if (!store)
        return false;
      loadSeconds = secondsSince(loadStart);
      auto created = Session::create(driver.program, bound);
      if (!created) {
        reportError(llvm::toString(created.takeError()));
        return false;
      }
      session = std::move(*created);
      return true;
    };
    if (!compileModel(driver, inputs.bindArgs, entries, LoweringStage::LLVM,
                      compiled, beforeGeneration))
      return false;
    for (const BoundGeneric &generic : compiled.bound->generics)
      if (generic.name == "T")
        logitElement = generic.element;
    auto jitted = CpuExecutable::compile(*compiled.module, {});
    if (!jitted) {
      reportError("cannot compile the model: " +
                  llvm::toString(jitted.takeError()));
      return false;
    }
    executable = std::move(*jitted);
    // Code is generated at the first lookup; do it now so that the calls'
    // times are the model's alone.
    for (const std::string &entry : entries)
      if (auto symbol = executable->lookup(entry); !symbol) {
        reportError("cannot compile the model: " +
                    llvm::toString(symbol.takeError()));
        return false;
      }
    return true;
  }

  /// Runs `call` (which the session accepts): the weights, for a stateful
  /// entry every state, then the call's arguments; stores the new states.
  llvm::Error call(const EntryCall &call, std::vector<int64_t> &shape,
                   std::vector<float> &logits) {
    if (llvm::Error error = session->check(call))
      return error;
    std::vector<MemRefDescriptor> args;
    for (const LoadedParameter &loaded : store->parameters())
      args.push_back(MemRefDescriptor::forData(const_cast<void *>(loaded.data),
                                               loaded.param->shape));
    bool stateful = isStateful(call.entry);
    if (stateful)
      for (StateBuffer &state : session->states())
        args.push_back(
            MemRefDescriptor::forData(state.data, state.state.shape));
    std::vector<int32_t> tokens = call.tokens, positions = call.positions,
                         slots = call.slots, lengths = call.lengths;
    int32_t pos = call.pos;
    args.push_back(
        MemRefDescriptor::forData(tokens.data(), {call.rows, call.length}));
    switch (call.entry) {
    case EntryKind::Prefill:
    case EntryKind::Decode:
      args.push_back(MemRefDescriptor::forData(&pos, {}));
      break;
    case EntryKind::DecodeRows:
      args.push_back(MemRefDescriptor::forData(positions.data(),
                                               {int64_t(positions.size())}));
      break;
    case EntryKind::PrefillSlots:
      args.push_back(
          MemRefDescriptor::forData(slots.data(), {int64_t(slots.size())}));
      args.push_back(
          MemRefDescriptor::forData(lengths.data(), {int64_t(lengths.size())}));
      break;
    case EntryKind::Forward:
    case EntryKind::NextToken:
      break;
    }

    std::vector<MemRefDescriptor> results = {
        MemRefDescriptor::forResult(call.entry == EntryKind::Forward ? 3 : 2)};
    if (stateful)
      for (StateBuffer &state : session->states())
        results.push_back(
            MemRefDescriptor::forResult(unsigned(state.state.shape.size())));
    llvm::StringRef name = entryName(call.entry);
    if (llvm::Error error = executable->invoke(name, results, args))
      return llvm::createStringError("running `" + name +
                                     "` failed: " + toString(std::move(error)));

    // Logits: contiguous, row-major (identity layout).
    const MemRefDescriptor &result = results.front();
    shape.assign(result.sizes().begin(), result.sizes().end());
    logits.resize(size_t(result.numElements()));
    const char *base = static_cast<const char *>(result.data()) +
                       result.offset() * elementTypeBytes(logitElement);
    for (size_t i = 0; i < logits.size(); ++i)
      logits[i] = elementToFloat(base, logitElement, int64_t(i));

    llvm::Error problem = llvm::Error::success();
    for (size_t i = 0; stateful && i < session->states().size(); ++i) {
      const MemRefDescriptor &stateResult = results[i + 1];
      const StateBuffer &state = session->states()[i];
      int64_t stride = 1;
      bool contiguous =
          stateResult.sizes() == llvm::ArrayRef(state.state.shape);
      for (int64_t d = int64_t(stateResult.rank()) - 1; contiguous && d >= 0;
           --d) {
        contiguous = stateResult.strides()[size_t(d)] == stride ||
                     stateResult.sizes()[size_t(d)] == 1;
        stride *= stateResult.sizes()[size_t(d)];
      }
      if (!contiguous) {
        if (!problem)
          problem = llvm::createStringError(
              "`" + name + "` returned state `" + state.state.path +
              "` in a layout the runtime does not read (a compiler bug)");
        continue;
      }
      session->storeState(i, static_cast<const char *>(stateResult.data()) +
                                 stateResult.offset() *
                                     elementTypeBytes(state.state.element));
    }
    // A state updated in place is its own input: freeResult keeps it.
    llvm::SmallVector<void *> freed;
    for (MemRefDescriptor &r : results) {
      if (llvm::is_contained(freed, r.basePtr()))
        continue;
      freed.push_back(r.basePtr());
      r.freeResult(args);
    }
    if (problem)
      return problem;
    session->finish(call);
    return llvm::Error::success();
  }
};

/// Each entry the calls use, once, in the order of first use.
std::vector<std::string> entriesOf(llvm::ArrayRef<EntryCall> calls) {
  llvm::SetVector<llvm::StringRef> names;
  for (const EntryCall &call : calls)
    names.insert(entryName(call.entry));
  return std::vector<std::string>(names.begin(), names.end());
}

} // namespace

int linnet::driver::runScript(const char *argv0, const RunInputs &inputs,
                              llvm::StringRef scriptPath,
                              llvm::StringRef outDir) {
  auto start = std::chrono::steady_clock::now();
  auto buffer = llvm::MemoryBuffer::getFile(scriptPath);
  if (!buffer)
    return reportError("--script: cannot read `" + scriptPath +
                       "`: " + buffer.getError().message());
  auto calls = parseScript((*buffer)->getBuffer());
  if (!calls)
    return reportError("--script: " + llvm::toString(calls.takeError()));
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return reportError("--out: cannot create the folder `" + outDir +
                       "`: " + ec.message());

  SessionRunner runner;
  std::vector<std::string> entries = entriesOf(*calls);
  if (!runner.prepare(argv0, inputs, entries, [&](const BoundModel &bound) {
        return checkCalls("--script", bound, *calls);
      }))
    return 1;
  double prepareSeconds = secondsSince(start);

  for (size_t i = 0; i < calls->size(); ++i) {
    const EntryCall &call = (*calls)[i];
    std::vector<int64_t> shape;
    std::vector<float> logits;
    auto callStart = std::chrono::steady_clock::now();
    if (llvm::Error error = runner.call(call, shape, logits))
      return reportError("--script: " + callPrefix(i, call) +
                         llvm::toString(std::move(error)));
    double callSeconds = secondsSince(callStart);
    llvm::SmallString<256> path(outDir);
    llvm::sys::path::append(path, "call_" + std::to_string(i) + ".npy");
    if (llvm::Error error = writeNpy(path, shape, logits))
      return reportError(llvm::toString(std::move(error)));
    if (inputs.timings)
      llvm::errs() << llvm::format("linnet run: call %zu %s %.3f s (%lld "
                                   "tokens)\n",
                                   i, entryName(call.entry).data(), callSeconds,
                                   (long long)(call.rows * call.length));
  }
  if (inputs.timings)
    llvm::errs() << llvm::format(
        "linnet run: compile and load %.3f s (load %.3f s)\n", prepareSeconds,
        runner.loadSeconds);
  return 0;
}

int linnet::driver::runGeneration(const char *argv0, const RunInputs &inputs,
                                  llvm::StringRef promptTokens,
                                  unsigned count) {
  auto start = std::chrono::steady_clock::now();
  if (count == 0)
    return reportError("--generate: give at least 1 token to generate");
  // The prompt runs on every slot (`Batch` rows, identical), so generation
  // works whatever `Batch` is bound to; row 0's tokens are printed.
  EntryCall prefill;
  prefill.entry = EntryKind::Prefill;
  auto check = [&](const BoundModel &bound) {
    auto sizes = SessionSizes::of(bound);
    if (!sizes) {
      reportError("--generate: " + llvm::toString(sizes.takeError()));
      return false;
    }
    auto rows = parseTokenRows("--prompt-tokens", promptTokens, sizes->vocab);
    if (!rows) {
      reportError(llvm::toString(rows.takeError()));
      return false;
    }
    if (rows->size() != 1) {
      reportError("--prompt-tokens: " + std::to_string(rows->size()) +
                  " rows; give one prompt, ids separated by `,`");
      return false;
    }
    const std::vector<int32_t> &prompt = rows->front();
    // The last generated token is not fed back.
    int64_t total = int64_t(prompt.size()) + int64_t(count) - 1;
    if (total > sizes->maxSeq) {
      reportError("--generate: the prompt's " + std::to_string(prompt.size()) +
                  " tokens and " + std::to_string(count - 1) +
                  " generated ones fed back need " + std::to_string(total) +
                  " positions, more than the cache holds (`MaxSeq` = " +
                  std::to_string(sizes->maxSeq) + ")");
      return false;
    }
    prefill.rows = sizes->batch;
    prefill.length = int64_t(prompt.size());
    for (int64_t b = 0; b < sizes->batch; ++b)
      prefill.tokens.insert(prefill.tokens.end(), prompt.begin(), prompt.end());
    return checkCalls("--prompt-tokens", bound, {prefill});
  };

  SessionRunner runner;
  std::vector<std::string> entries = {"prefill"};
  if (count > 1)
    entries.push_back("decode");
  if (!runner.prepare(argv0, inputs, entries, check))
    return 1;
  double prepareSeconds = secondsSince(start);

  std::vector<int32_t> generated;
  std::vector<int64_t> shape;
  std::vector<float> logits;
  EntryCall step = prefill;
  double prefillSeconds = 0, decodeSeconds = 0;
  while (generated.size() < count) {
    auto stepStart = std::chrono::steady_clock::now();
    if (llvm::Error error = runner.call(step, shape, logits))
      return reportError("--generate: step " +
                         std::to_string(generated.size()) + ": " +
                         llvm::toString(std::move(error)));
    (generated.empty() ? prefillSeconds : decodeSeconds) +=
        secondsSince(stepStart);
    // Greedy: the largest logit of row 0, ties to the lower id.
    int64_t vocab = shape.back();
    int32_t best = 0;
    for (int64_t id = 1; id < vocab; ++id)
      if (logits[size_t(id)] > logits[size_t(best)])
        best = int32_t(id);
    generated.push_back(best);
    int32_t nextPos = int32_t(step.pos + step.length);
    step = EntryCall();
    step.entry = EntryKind::Decode;
    step.rows = prefill.rows;
    step.length = 1;
    step.tokens.assign(size_t(prefill.rows), best);
    step.pos = nextPos;
  }
  for (size_t i = 0; i < generated.size(); ++i)
    llvm::outs() << (i ? " " : "") << generated[i];
  llvm::outs() << "\n";
  if (inputs.timings) {
    llvm::errs() << llvm::format(
        "linnet run: compile and load %.3f s, prefill %.3f s (%lld tokens)",
        prepareSeconds, prefillSeconds, (long long)prefill.length);
    if (count > 1)
      llvm::errs() << llvm::format(", decode %.3f s (%.1f tokens/s)",
                                   decodeSeconds,
                                   double(count - 1) / decodeSeconds);
    llvm::errs() << "\n";
  }
  return 0;
}

//===- RuntimeCalls.cpp - What generated code calls in the runtime -------===//
//
// The unwinding is a longjmp from the failing allocation back to
// callGeneratedCode: the frames in between are generated code only (no
// destructors to skip), and the buffers it already held are leaked, which
// is what a failed entry call costs. Inside an OpenMP parallel region other
// threads wait for this one, so there the process ends instead.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/RuntimeCalls.h"

#include "linnet/Basic/Errors.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <malloc.h>
#include <mutex>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

using namespace linnet;

namespace {

/// The entry call in progress on this thread.
struct GeneratedCall {
  std::jmp_buf unwind;
  uint64_t failedBytes = 0;
  /// Another failure (failGeneratedCall): its ID and message.
  std::optional<std::pair<ErrorId, std::string>> failure;
};
thread_local GeneratedCall *currentCall = nullptr;
/// Bytes the generated code holds now (malloc_usable_size of each buffer).
std::atomic<uint64_t> heldBytes{0};
std::string messageTool = "linnet";
/// A device's allocator, when one is set.
void *(*deviceAllocate)(uint64_t) = nullptr;
void (*deviceFree)(void *) = nullptr;

/// The first index out of range since the call began, from any thread.
struct IndexError {
  std::atomic<bool> seen{false};
  const char *site = nullptr;
  int64_t index = 0, bound = 0;
};
IndexError indexError;

bool inParallelRegion() {
  // libomp is loaded by the JIT or linked into built binaries; look it up
  // rather than link it into every user of the runtime.
  using InParallel = int (*)();
  static auto inParallel =
      reinterpret_cast<InParallel>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
  return inParallel && inParallel();
}

[[noreturn]] void failAllocation(uint64_t bytes) {
  if (currentCall && !inParallelRegion()) {
    currentCall->failedBytes = bytes;
    std::longjmp(currentCall->unwind, 1);
  }
  std::string message = messageTool +
                        ": error: out of memory: generated code "
                        "could not allocate " +
                        formatBytes(bytes) + " (it held " +
                        formatBytes(heldBytes.load()) + ") [OutOfMemory]\n";
  std::fwrite(message.data(), 1, message.size(), stderr);
  std::_Exit(1);
}

void *track(void *pointer, uint64_t bytes) {
  if (!pointer)
    failAllocation(bytes);
  heldBytes += malloc_usable_size(pointer);
  return pointer;
}

} // namespace

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  if (deviceAllocate) {
    void *pointer = deviceAllocate(bytes);
    if (!pointer)
      failAllocation(bytes);
    return pointer;
  }
  return track(std::malloc(bytes ? bytes : 1), bytes);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;
  if (rounded < bytes)
    failAllocation(bytes);
  // A device's blocks are aligned to at least 256 bytes.
  if (deviceAllocate)
    return _mlir_memref_to_llvm_alloc(rounded);
  return track(std::aligned_alloc(alignment, rounded ? rounded : alignment),
               bytes);
}

extern "C" void linnet_index_out_of_range(const char *site, int64_t index,
                                          int64_t bound) {
  bool expected = false;
  if (!indexError.seen.compare_exchange_strong(expected, true))
    return;
  indexError.site = site;
  indexError.index = index;
  indexError.bound = bound;
}

extern "C" void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  if (deviceFree) {
    deviceFree(pointer);
    return;
  }
  heldBytes -= malloc_usable_size(pointer);
  std::free(pointer);
}

void linnet::failGeneratedCall(ErrorId id,
                               llvm::function_ref<std::string()> describe) {
  if (currentCall && !inParallelRegion()) {
    currentCall->failure.emplace(id, describe());
    std::longjmp(currentCall->unwind, 1);
  }
  std::string text = messageTool +
                     ": error: " + llvm::toString(makeError(id, describe())) +
                     "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::_Exit(1);
}

void linnet::freeGeneratedBuffer(void *pointer) {
  _mlir_memref_to_llvm_free(pointer);
}

void linnet::setGeneratedCodeAllocator(void *(*allocate)(uint64_t),
                                       void (*free)(void *)) {
  deviceAllocate = allocate;
  deviceFree = free;
}

llvm::Error linnet::callGeneratedCode(PackedEntry entry, void **packed) {
  // Generated code allocates and frees the same intermediate buffers on
  // every call. Above glibc's mmap threshold (128 KiB at first) each is a
  // fresh mapping whose pages fault in again on every call (about 800 faults
  // a bf16 decode step, 10-15 % of it); keep them in the heap, and keep
  // freed heap memory for the next call instead of trimming it.
  static std::once_flag heapTuned;
  std::call_once(heapTuned, [] {
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  });
  GeneratedCall call;
  GeneratedCall *outer = currentCall;
  uint64_t heldBefore = heldBytes.load();
  currentCall = &call;
  if (setjmp(call.unwind)) {
    currentCall = outer;
    if (call.failure)
      return makeError(call.failure->first, call.failure->second);
    uint64_t held = heldBytes.load() - heldBefore;
    return makeError(ErrorId::OutOfMemory,
                     "out of memory: the generated code needed another " +
                         formatBytes(call.failedBytes) +
                         " for an intermediate result, with " +
                         formatBytes(held) +
                         " already in use by the call and " +
                         formatBytes(availableMemoryBytes()) +
                         " left; give a shorter input or fewer rows");
  }
  indexError.seen = false;
  entry(packed);
  currentCall = outer;
  if (indexError.seen)
    return makeError(ErrorId::IndexOutOfRange,
                     llvm::Twine(indexError.site) + " got index " +
                         llvm::Twine(indexError.index) + " for an axis of " +
                         llvm::Twine(indexError.bound) +
                         "; indices must be in [0, " +
                         llvm::Twine(indexError.bound) +
                         ") (the call's results are discarded)");
  return llvm::Error::success();
}

uint64_t linnet::availableMemoryBytes() {
  uint64_t available = UINT64_MAX;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kilobytes;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit)
    if (key == "MemAvailable:") {
      available = kilobytes * 1024;
      break;
    }
  rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    // The first field of /proc/self/statm is the address space in pages.
    uint64_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    uint64_t used = pages * uint64_t(sysconf(_SC_PAGESIZE));
    uint64_t left = limit.rlim_cur > used ? limit.rlim_cur - used : 0;
    available = std::min(available, left);
  }
  return available;
}

std::string linnet::formatBytes(uint64_t bytes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= 1000000000)
    os << llvm::format("%.2f GB", double(bytes) / 1e9);
  else if (bytes >= 1000000)
    os << llvm::format("%.0f MB", double(bytes) / 1e6);
  else if (bytes >= 1000)
    os << llvm::format("%.0f KB", double(bytes) / 1e3);
  else
    os << bytes << " bytes";
  return text;
}

std::vector<std::pair<const char *, void *>> linnet::generatedCodeSymbols() {
  return {{"_mlir_memref_to_llvm_alloc",
           reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
          {"_mlir_memref_to_llvm_aligned_alloc",
           reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
          {"_mlir_memref_to_llvm_free",
           reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
          {"linnet_index_out_of_range",
           reinterpret_cast<void *>(&linnet_index_out_of_range)}};
}

void linnet::setGeneratedCodeToolName(llvm::StringRef tool) {
  messageTool = tool.str();
}

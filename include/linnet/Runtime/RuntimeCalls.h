//===- RuntimeCalls.h - What generated code calls in the runtime -*- C++
//-*-===//
//
// Generated code calls the runtime for two things, both defined here:
// - its buffers, through `_mlir_memref_to_llvm_alloc` and friends (the CPU
//   pipeline's runtime-allocation option). An allocation that fails does
//   not return null into code that would write through it: the call that
//   runs the entry is unwound to, and its error says how many bytes it
//   needed and how many the call already held;
// - `linnet_index_out_of_range`, when an index tensor (`take`'s ids) holds
//   a value outside its axis (IRGen's checkIndices): the first one is kept
//   and becomes the call's error, with the op's source location.
// The same functions serve the JIT (registered by name) and built binaries
// (linked).
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_RUNTIMECALLS_H
#define LINNET_RUNTIME_RUNTIMECALLS_H

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace linnet {

/// A compiled entry's packed wrapper (`_mlir__mlir_ciface_<name>`): one
/// pointer per parameter of its C interface, the result's first.
using PackedEntry = void (*)(void **packed);

/// Calls `entry(packed)`. An allocation of the generated code that fails on
/// this thread ends the call with an error saying how many bytes it needed;
/// one on another thread (inside a parallel region, where unwinding is not
/// possible) prints such an error and exits with status 1. An index out of
/// range makes the call's error, once it has returned.
llvm::Error callGeneratedCode(PackedEntry entry, void **packed);

/// Ends the entry call in progress on this thread with error `id` and the
/// message `describe` builds (unwinding to callGeneratedCode); outside a
/// call, or inside a parallel region, prints it and exits with status 1. For
/// the runtime functions generated code calls (a device's launches, copies,
/// buffers). The unwinding skips destructors: callers build every string
/// inside `describe` and hold none of their own.
[[noreturn]] void failGeneratedCall(ErrorId id,
                                    llvm::function_ref<std::string()> describe);

/// Where the generated code's buffers come from: the heap (both null, the
/// default), or a device's memory (a GPU's managed memory, which the host
/// and its kernels both reach). An allocation that returns null fails the
/// call as the heap's does.
void setGeneratedCodeAllocator(void *(*allocate)(uint64_t bytes),
                               void (*free)(void *pointer));

/// Frees a buffer the generated code allocated and returned (its results),
/// as the generated code frees its own.
void freeGeneratedBuffer(void *pointer);

/// The bytes this process can still allocate: the smaller of the system's
/// available memory and what its address-space limit (`ulimit -v`) leaves.
uint64_t availableMemoryBytes();

/// `1.21 GB`, `512 MB`, `64 KB`, `12 bytes`.
std::string formatBytes(uint64_t bytes);

/// The functions generated code calls, by name, for a JIT to resolve it
/// against.
std::vector<std::pair<const char *, void *>> generatedCodeSymbols();

/// The program name errors printed from inside a parallel region start
/// with (`linnet`, or a built binary's name).
void setGeneratedCodeToolName(llvm::StringRef tool);

} // namespace linnet

#endif // LINNET_RUNTIME_RUNTIMECALLS_H

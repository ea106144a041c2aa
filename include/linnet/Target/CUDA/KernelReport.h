//===- KernelReport.h - What each GPU kernel uses and moves -----*- C++ -*-===//
//
// `linnet build --target cuda --report`: per kernel, the registers, stack
// frame (local memory: where spills go), shared memory and threads that
// ptxas gave it, read from the cubins inside the fatbinaries (their ELF
// `.nv.info` attributes, the same figures `ptxas -v` and `cuobjdump
// -res-usage` print); its launch shape and the bytes of its operands, from
// the host plan before the kernels are compiled; per entry, the launches
// one call makes and the time its bytes take at a memory bandwidth.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_TARGET_CUDA_KERNELREPORT_H
#define LINNET_TARGET_CUDA_KERNELREPORT_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace linnet {

/// What ptxas gave one kernel.
struct KernelResources {
  unsigned registers = 0;
  /// The stack frame: local memory, which spilled registers also use.
  uint64_t stackBytes = 0;
  uint64_t sharedBytes = 0;
  /// The largest block it may be launched with (EIATTR_MAX_THREADS).
  unsigned maxThreads = 0;
  /// Whether the cubin calls the device's malloc (or free).
  bool callsMalloc = false;
};

/// Each kernel of the cubins in `fatbinary` (one fatbinary container, or
/// several back to back), by name.
llvm::Expected<llvm::StringMap<KernelResources>>
readFatbinaryResources(llvm::StringRef fatbinary);

/// The kernels of one cubin (an ELF image), added to `kernels`.
llvm::Error readCubinResources(llvm::StringRef cubin,
                               llvm::StringMap<KernelResources> &kernels);

/// Each kernel in every `gpu.binary` of `module` (stage Binary).
llvm::Expected<llvm::StringMap<KernelResources>>
readModuleResources(mlir::ModuleOp module);

/// One `gpu.launch_func` of the host plan.
struct KernelLaunch {
  std::string kernel;
  /// Blocks and threads per block; 0 where the count is known only at run
  /// time.
  int64_t grid[3] = {0, 0, 0};
  int64_t block[3] = {0, 0, 0};
  /// Bytes of the operands the kernel loads from and stores to (a buffer
  /// both read and written counts in both), each the least of three upper
  /// bounds: the whole buffer; its views the blocks take, times the blocks
  /// (an expert's rows of the stacked weights); its loads or stores, each
  /// times the runs of its loops, times the threads (a gather's rows of the
  /// embedding). Operands of a size with no bound are left out and counted
  /// in `dynamicOperands`.
  uint64_t bytesRead = 0, bytesWritten = 0;
  unsigned dynamicOperands = 0;
  /// The times one call launches it here (a launch in host loops of known
  /// trip counts, their product).
  uint64_t count = 1;
  /// Whether a host loop around it runs a number of times known only at run
  /// time (counted once in `count`: per token of a prompt, say).
  bool inRunTimeLoop = false;
  /// The grid waits in the kernel (a chained kernel's, between its phases:
  /// linnet-cuda-chain-launches).
  unsigned gridWaits = 0;
};

/// The launches one call of an entry makes, in order, through the host
/// functions it calls (a host function called n times, n times over).
struct EntryLaunches {
  std::string entry;
  std::vector<KernelLaunch> launches;
  /// The times one call waits for the device (the host plan's calls of
  /// `linnet_device_synchronize`, in host loops counted as launches are):
  /// each drains the stream, so the next launch's start is not hidden.
  uint64_t waits = 0;
};

/// The launches of each public host function of `module` (stage Kernels:
/// `gpu.launch_func` with buffer operands, `gpu.func` kernels), found in a
/// copy with the host functions inlined into each entry and folded, so that
/// the grids and buffer sizes are those of the entry's shapes. A launch in
/// a host loop of a bounded trip count counts that many times (at most;
/// attention's blocks of keys, bounded by the cache), in one of unknown
/// count once. With `tokens`, each entry is taken as called with one row of
/// that many tokens: an argument's last axis of a run-time size is `tokens`
/// where the argument has two axes (the tokens), every other axis of a
/// run-time size 1 (the rows; a slot's index and length), so that a
/// prompt's grids and buffers have sizes.
std::vector<EntryLaunches>
collectEntryLaunches(mlir::ModuleOp module,
                     std::optional<int64_t> tokens = std::nullopt);

/// The report: a row per kernel (each launched kernel once, with the entry
/// that launches it most), then a row per entry; a last line says whether
/// every kernel is within the limits (no stack frame, no malloc). An
/// entry's time is its bytes at `bytesPerSecond` plus `secondsPerLaunch`
/// for each launch and `secondsPerGridWait` for each grid wait. Returns
/// whether every kernel is within the limits.
bool printKernelReport(llvm::raw_ostream &os,
                       const std::vector<EntryLaunches> &entries,
                       const llvm::StringMap<KernelResources> &kernels,
                       double bytesPerSecond, double secondsPerLaunch,
                       double secondsPerGridWait);

} // namespace linnet

#endif // LINNET_TARGET_CUDA_KERNELREPORT_H

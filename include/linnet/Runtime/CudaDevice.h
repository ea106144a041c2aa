//===- CudaDevice.h - an NVIDIA GPU, through the CUDA driver API -*- C++
//-*-===//
//
// The CUDA driver is loaded at run time (`dlopen("libcuda.so.1")`), so that
// linnet and the binaries it builds start, and fail with a clear error, on a
// machine without a driver or a GPU. A CudaDevice is one GPU opened for one
// run: its checks (a driver, a device, the architecture the kernels were
// built for, enough free memory) come before anything is allocated.
//
// Memory: parameters live in device memory, uploaded once; everything the
// generated code allocates, the session's states and each call's inputs
// are managed memory, which the host plan reads between launches (after
// waiting for the device: linnet-cuda-plan-host). Every launch and copy
// goes to one stream, in order.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_CUDADEVICE_H
#define LINNET_RUNTIME_CUDADEVICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace linnet {

/// What a run needs of its GPU.
struct CudaRequirements {
  /// The compute capability the kernels were built for (sm_90a: 9.0, and
  /// exactly it: an `a` cubin runs on that architecture alone).
  int major = 9, minor = 0;
  std::string chip = "sm_90a";
  /// Bytes the run allocates before its first call, by what they are for.
  std::vector<std::pair<std::string, uint64_t>> memory;

  /// The requirements of kernels for `chip` (`sm_90a`: 9.0).
  static CudaRequirements forChip(llvm::StringRef chip);
};

class CudaDevice {
public:
  /// Loads the driver and opens device 0 for `needs`, or says why not:
  /// no libcuda.so.1, the driver fails to start, no device, another
  /// architecture, less free memory than `needs.memory` adds up to.
  static llvm::Expected<std::unique_ptr<CudaDevice>>
  open(const CudaRequirements &needs);
  ~CudaDevice();

  /// `NVIDIA H200 (compute capability 9.0, 141 GB, driver 13.0)`.
  const std::string &description() const { return describedAs; }

  /// Device memory (parameters); null when the device has none left.
  void *allocateDevice(uint64_t bytes);
  /// Managed memory, which host and device both reach; null when none left.
  void *allocateManaged(uint64_t bytes);
  void free(void *pointer);
  /// Copies `bytes` (host to device, device to host or within either), in
  /// stream order.
  llvm::Error copy(void *dst, const void *src, uint64_t bytes);
  /// Waits for everything launched so far; the first failure of any of it.
  llvm::Error synchronize();

  /// The functions generated code calls (the `mgpu*` ABI of MLIR's
  /// gpu-to-llvm, `linnet_device_synchronize`, and its buffers' allocation)
  /// by name, for a JIT; they act on the device made current below.
  static std::vector<std::pair<const char *, void *>> generatedCodeSymbols();
  /// The device generated code acts on (null: none), for the duration of a
  /// run.
  static void makeCurrent(CudaDevice *device);

  struct Driver;
  struct Module;

private:
  CudaDevice() = default;
  std::unique_ptr<Driver> driver;
  std::string describedAs;

public:
  /// For the functions generated code calls (CudaDevice.cpp).
  Driver &api() { return *driver; }
};

} // namespace linnet

#endif // LINNET_RUNTIME_CUDADEVICE_H

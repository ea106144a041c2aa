//===- FakeCuda.cpp - a CUDA driver without a GPU, for tests --------------===//
//
// Built as build/test/fake-cuda/libcuda.so.1, which tests put first on
// LD_LIBRARY_PATH, so that a binary's checks of the driver and the device
// are exercised on a machine without either. `LINNET_FAKE_CUDA` says which
// machine it pretends to be:
//   init-fails  cuInit fails (CUDA_ERROR_NO_DEVICE), as with no GPU
//   no-device   the driver starts and counts no device
//   sm80        an A100: compute capability 8.0
//   small       compute capability 9.0 with 1 MB free
//   fragmented  141 GB free, but no device allocation succeeds (memory
//               taken since the check, or in pieces too small)
//   (unset)     compute capability 9.0, 141 GB free; memory is the heap and
//               copies are memcpy, but it cannot run a kernel: every launch
//               fails (CUDA_ERROR_NOT_SUPPORTED)
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

// The driver's types, as cuda.h declares them.
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2,
                   kNoDevice = 100, kNotFound = 500,
                   kNotSupported = 801;

std::string mode() {
  const char *value = std::getenv("LINNET_FAKE_CUDA");
  return value ? value : "";
}

int dummy;

/// The errors this driver gives, as the real one names them.
struct ErrorText {
  CUresult result;
  const char *name, *text;
};
constexpr ErrorText kErrors[] = {
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kNotSupported, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported (a fake driver runs no kernel)"},
};

const ErrorText *errorText(CUresult result) {
  for (const ErrorText &error : kErrors)
    if (error.result == result)
      return &error;
  return nullptr;
}

} // namespace

extern "C" {

CUresult cuInit(unsigned) { return mode() == "init-fails" ? kNoDevice : 0; }
CUresult cuDriverGetVersion(int *version) {
  *version = 13000;
  return kSuccess;
}
CUresult cuDeviceGetCount(int *count) {
  *count = mode() == "no-device" ? 0 : 1;
  return kSuccess;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, mode() == "sm80" ? "Fake A100" : "Fake H200",
               size_t(length));
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  bool ampere = mode() == "sm80";
  if (attribute == 75)
    *value = ampere ? 8 : 9;
  else if (attribute == 76)
    *value = 0;
  else if (attribute == 16) // multiprocessors
    *value = 132;
  else if (attribute == 95) // cooperative launch
    *value = mode() == "no-cooperative" ? 0 : 1;
  else
    return kInvalidValue;
  return kSuccess;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int) {
  *bytes = size_t(141) << 30;
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUctx_st **context, int) {
  *context = reinterpret_cast<CUctx_st *>(&dummy);
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
CUresult cuCtxSetCurrent(CUctx_st *) { return kSuccess; }
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *total = size_t(141) << 30;
  *free = mode() == "small" ? size_t(1) << 20 : size_t(140) << 30;
  return kSuccess;
}
CUresult cuStreamCreate(CUstream_st **stream, unsigned) {
  *stream = reinterpret_cast<CUstream_st *>(&dummy);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(CUstream_st *) { return kSuccess; }
CUresult cuStreamSynchronize(CUstream_st *) { return kSuccess; }
CUresult cuModuleLoadData(CUmod_st **module, const void *) {
  *module = reinterpret_cast<CUmod_st *>(&dummy);
  return kSuccess;
}
CUresult cuModuleUnload(CUmod_st *) { return kSuccess; }
// A handle of its own per kernel, as the runtime keys kernels by handle.
CUresult cuModuleGetFunction(CUfunc_st **function, CUmod_st *,
                             const char *name) {
  static std::map<std::string, char> functions;
  *function = reinterpret_cast<CUfunc_st *>(&functions[name]);
  return kSuccess;
}
// A chained kernel's module has its grid counter; in mode `chained` (or
// `no-cooperative`) other kernels launch (and do nothing), so that a run
// reaches the first chained launch, which fails.
CUresult cuModuleGetGlobal_v2(CUdeviceptr *, size_t *, CUmod_st *,
                              const char *name) {
  return std::strstr(name, "_then_") ? kSuccess : kNotFound;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, CUfunc_st *,
                                                     int, size_t) {
  *blocks = 2;
  return kSuccess;
}
CUresult cuLaunchKernel(CUfunc_st *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, CUstream_st *, void **,
                        void **) {
  return mode() == "chained" || mode() == "no-cooperative" ? kSuccess
                                                           : kNotSupported;
}
CUresult cuLaunchCooperativeKernel(CUfunc_st *, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, unsigned, unsigned,
                                   CUstream_st *, void **) {
  return kNotSupported;
}
CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (mode() == "fragmented")
    return kOutOfMemory;
  void *block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  *pointer = reinterpret_cast<uintptr_t>(block);
  return block ? kSuccess : kOutOfMemory;
}
CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned) {
  return cuMemAlloc_v2(pointer, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr pointer) {
  std::free(reinterpret_cast<void *>(uintptr_t(pointer)));
  return kSuccess;
}
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream_st *) {
  std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)),
              reinterpret_cast<const void *>(uintptr_t(src)), bytes);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr, unsigned, size_t, CUstream_st *) {
  return kNotSupported;
}
CUresult cuMemsetD16Async(CUdeviceptr, unsigned short, size_t, CUstream_st *) {
  return kNotSupported;
}
CUresult cuGetErrorName(CUresult result, const char **name) {
  const ErrorText *error = errorText(result);
  if (!error)
    return kInvalidValue;
  *name = error->name;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  const ErrorText *error = errorText(result);
  if (!error)
    return kInvalidValue;
  *text = error->text;
  return kSuccess;
}

} // extern "C"

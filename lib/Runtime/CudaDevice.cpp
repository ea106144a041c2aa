//===- CudaDevice.cpp - an NVIDIA GPU, through the CUDA driver API --------===//
//
// The driver's types and the few constants used are declared here (they
// are its stable ABI), so that the runtime builds without the CUDA toolkit.
// Errors of calls the generated code makes (a module that does not load, a
// launch the driver refuses) end the entry call through the runtime's
// unwinding (RuntimeCalls.h); the module of a kernel is loaded at its first
// launch, since the generated code registers its modules from a global
// constructor, before any device is open.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/CudaDevice.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Runtime/RuntimeCalls.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <dlfcn.h>
#include <map>
#include <mutex>

using namespace linnet;

// The driver's handles, declared as cuda.h declares them (outside any
// namespace: a call through a pointer of another type is undefined).
struct CUctx_st;
struct CUstream_st;
struct CUmod_st;
struct CUfunc_st;

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = CUctx_st *;
using CUstream = CUstream_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
constexpr CUresult kSuccess = 0;
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;
constexpr int kMultiprocessorCount = 16, kCooperativeLaunch = 95;
constexpr CUresult kNotFound = 500;
constexpr unsigned kAttachGlobal = 1;

} // namespace

/// The driver's functions this runtime calls, resolved from libcuda.so.1.
struct CudaDevice::Driver {
  void *library = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule,
                                const char *);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction,
                                                          int, size_t);
  CUresult (*cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, unsigned,
                                        unsigned, CUstream, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);

  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  /// Freed managed blocks by size, for the generated code's next buffers:
  /// it allocates and frees the same ones on every call, and the driver's
  /// own allocation waits for the device.
  std::multimap<uint64_t, void *> freeBlocks;
  llvm::DenseMap<void *, uint64_t> blockBytes;
  uint64_t managedBytes = 0;
  std::mutex poolMutex;

  /// `CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)`.
  std::string describe(CUresult result) const {
    const char *name = nullptr, *text = nullptr;
    if (cuGetErrorName)
      cuGetErrorName(result, &name);
    if (cuGetErrorString)
      cuGetErrorString(result, &text);
    std::string described =
        name ? name : "CUDA error " + std::to_string(result);
    if (text)
      described += std::string(" (") + text + ")";
    return described;
  }
};

/// A module the generated code registered: its cubin, loaded on first use.
struct CudaDevice::Module {
  const void *blob = nullptr;
  uint64_t bytes = 0;
  CUmodule loaded = nullptr;
  llvm::StringMap<CUfunction> functions;
};

namespace {

CudaDevice *current = nullptr;
/// Each kernel's name (a key of its module's `functions`), for the
/// messages of its launch. Never destroyed: generated code unloads its
/// modules from its own destructors at exit, after this file's statics.
llvm::DenseMap<CUfunction, const char *> &kernelNames() {
  static auto *names = new llvm::DenseMap<CUfunction, const char *>;
  return *names;
}
/// The chained kernels (linnet-cuda-chain-launches: their module has a
/// `<kernel>_grid_arrivals` counter), each with the most blocks the GPU
/// holds at once (0 until its first launch): they are launched
/// cooperatively, every block resident, with no more blocks than that.
/// Never destroyed, as kernelNames.
llvm::DenseMap<CUfunction, unsigned> &chainedKernels() {
  static auto *kernels = new llvm::DenseMap<CUfunction, unsigned>;
  return *kernels;
}

template <typename F>
bool resolve(void *library, const char *name, F *&function) {
  function = reinterpret_cast<F *>(dlsym(library, name));
  return function != nullptr;
}

/// Ends the entry call in progress with a driver error: `what`, with
/// `name` quoted and `after` appended when given, failed. Takes only C
/// strings, since the unwinding skips its callers' destructors.
[[noreturn]] void failCall(const char *what, const char *name, CUresult result,
                           const char *after = "") {
  failGeneratedCall(ErrorId::CudaCallFailed, [&] {
    std::string subject = what;
    if (name)
      subject += std::string("`") + name + "`";
    return subject + after + " failed: " + current->api().describe(result);
  });
}

/// Ends the entry call in progress with the error `error` holds.
[[noreturn]] void failCall(llvm::Error error) {
  failGeneratedCall(ErrorId::CudaCallFailed,
                    [&] { return llvm::toString(std::move(error)); });
}

CudaDevice &currentDevice(const char *call) {
  if (!current)
    failGeneratedCall(ErrorId::CudaCallFailed, [&] {
      return (llvm::Twine("the generated code called ") + call +
              " with no GPU open")
          .str();
    });
  return *current;
}

uint64_t poolSize(uint64_t bytes) {
  // Powers of two up to 1 MiB, then whole MiBs: little waste, few sizes.
  constexpr uint64_t mib = 1 << 20;
  if (bytes <= mib) {
    uint64_t size = 256;
    while (size < bytes)
      size <<= 1;
    return size;
  }
  return (bytes + mib - 1) / mib * mib;
}

} // namespace

CudaRequirements CudaRequirements::forChip(llvm::StringRef chip) {
  CudaRequirements needs;
  needs.chip = chip.str();
  // sm_<major><minor>[a]: the last digit is the minor version.
  llvm::StringRef digits = chip.drop_front(3).rtrim("a");
  int version = 0;
  if (chip.starts_with("sm_") && !digits.getAsInteger(10, version)) {
    needs.major = version / 10;
    needs.minor = version % 10;
  }
  return needs;
}

llvm::Expected<std::unique_ptr<CudaDevice>>
CudaDevice::open(const CudaRequirements &needs) {
  std::unique_ptr<CudaDevice> device(new CudaDevice);
  device->driver = std::make_unique<Driver>();
  Driver &d = *device->driver;
  d.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d.library) {
    const char *why = dlerror();
    return makeError(
        ErrorId::CudaDriverMissing,
        llvm::Twine("no CUDA driver: libcuda.so.1 cannot be "
                    "loaded (") +
            (why ? why : "not found") +
            "); the GPU target needs an NVIDIA driver; `linnet run "
            "--target cuda --device emulated` runs its plan on "
            "the CPU");
  }
  bool complete =
      resolve(d.library, "cuInit", d.cuInit) &&
      resolve(d.library, "cuDriverGetVersion", d.cuDriverGetVersion) &&
      resolve(d.library, "cuDeviceGetCount", d.cuDeviceGetCount) &&
      resolve(d.library, "cuDeviceGet", d.cuDeviceGet) &&
      resolve(d.library, "cuDeviceGetName", d.cuDeviceGetName) &&
      resolve(d.library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
      resolve(d.library, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem) &&
      resolve(d.library, "cuDevicePrimaryCtxRetain",
              d.cuDevicePrimaryCtxRetain) &&
      resolve(d.library, "cuDevicePrimaryCtxRelease_v2",
              d.cuDevicePrimaryCtxRelease) &&
      resolve(d.library, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
      resolve(d.library, "cuMemGetInfo_v2", d.cuMemGetInfo) &&
      resolve(d.library, "cuStreamCreate", d.cuStreamCreate) &&
      resolve(d.library, "cuStreamDestroy_v2", d.cuStreamDestroy) &&
      resolve(d.library, "cuStreamSynchronize", d.cuStreamSynchronize) &&
      resolve(d.library, "cuModuleLoadData", d.cuModuleLoadData) &&
      resolve(d.library, "cuModuleUnload", d.cuModuleUnload) &&
      resolve(d.library, "cuModuleGetFunction", d.cuModuleGetFunction) &&
      resolve(d.library, "cuLaunchKernel", d.cuLaunchKernel) &&
      resolve(d.library, "cuModuleGetGlobal_v2", d.cuModuleGetGlobal) &&
      resolve(d.library, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
              d.cuOccupancyMaxActiveBlocksPerMultiprocessor) &&
      resolve(d.library, "cuLaunchCooperativeKernel",
              d.cuLaunchCooperativeKernel) &&
      resolve(d.library, "cuMemAlloc_v2", d.cuMemAlloc) &&
      resolve(d.library, "cuMemAllocManaged", d.cuMemAllocManaged) &&
      resolve(d.library, "cuMemFree_v2", d.cuMemFree) &&
      resolve(d.library, "cuMemcpyAsync", d.cuMemcpyAsync) &&
      resolve(d.library, "cuMemsetD32Async", d.cuMemsetD32Async) &&
      resolve(d.library, "cuMemsetD16Async", d.cuMemsetD16Async) &&
      resolve(d.library, "cuGetErrorName", d.cuGetErrorName) &&
      resolve(d.library, "cuGetErrorString", d.cuGetErrorString);
  if (!complete)
    return makeError(ErrorId::CudaDriverMissing,
                     llvm::Twine("the CUDA driver (libcuda.so.1) lacks ") +
                         dlerror() + "; it is older than CUDA 12");
  auto unavailable = [&](const llvm::Twine &what, CUresult result) {
    return makeError(ErrorId::CudaDeviceUnavailable,
                     what + ": " + d.describe(result));
  };
  if (CUresult r = d.cuInit(0); r != kSuccess)
    return unavailable("the CUDA driver does not start", r);
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != kSuccess)
    return unavailable("the CUDA driver cannot count its devices", r);
  if (count == 0)
    return makeError(ErrorId::CudaDeviceUnavailable,
                     "the CUDA driver sees no GPU");
  if (CUresult r = d.cuDeviceGet(&d.device, 0); r != kSuccess)
    return unavailable("GPU 0 cannot be opened", r);
  char name[256] = {};
  int major = 0, minor = 0, version = 0;
  size_t total = 0;
  d.cuDeviceGetName(name, sizeof(name) - 1, d.device);
  d.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, d.device);
  d.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, d.device);
  d.cuDeviceTotalMem(&total, d.device);
  d.cuDriverGetVersion(&version);
  device->describedAs =
      (llvm::Twine(name) + " (compute capability " + llvm::Twine(major) + "." +
       llvm::Twine(minor) + ", " + formatBytes(total) + ", driver " +
       llvm::Twine(version / 1000) + "." + llvm::Twine(version % 1000 / 10) +
       ")")
          .str();
  if (major != needs.major || minor != needs.minor)
    return makeError(ErrorId::CudaArchitectureMismatch,
                     "GPU 0 is a " + device->describedAs +
                         "; the kernels are built for " + needs.chip +
                         " (compute capability " + llvm::Twine(needs.major) +
                         "." + llvm::Twine(needs.minor) +
                         ") and run on it "
                         "alone");
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&d.context, d.device);
      r != kSuccess)
    return unavailable("GPU 0 gives no context", r);
  if (CUresult r = d.cuCtxSetCurrent(d.context); r != kSuccess)
    return unavailable("GPU 0's context cannot be made current", r);
  size_t free = 0;
  if (CUresult r = d.cuMemGetInfo(&free, &total); r != kSuccess)
    return unavailable("GPU 0 does not say its free memory", r);
  uint64_t needed = 0;
  std::string parts;
  for (const auto &[what, bytes] : needs.memory) {
    needed += bytes;
    parts += (parts.empty() ? "" : ", ") + what + " " + formatBytes(bytes);
  }
  if (needed > free)
    return makeError(ErrorId::DeviceOutOfMemory,
                     "GPU 0, a " + device->describedAs + ", has " +
                         llvm::Twine(uint64_t(free)) + " bytes (" +
                         formatBytes(free) + ") free; the model needs " +
                         llvm::Twine(needed) + " bytes (" + parts + ")");
  if (CUresult r = d.cuStreamCreate(&d.stream, 0); r != kSuccess)
    return unavailable("GPU 0 gives no stream", r);
  return device;
}

CudaDevice::~CudaDevice() {
  if (current == this) {
    current = nullptr;
    kernelNames().clear();
    chainedKernels().clear();
  }
  Driver &d = *driver;
  if (d.stream)
    d.cuStreamSynchronize(d.stream);
  // Every managed block, free or not: a failed call leaves its buffers.
  for (auto &[block, bytes] : d.blockBytes)
    d.cuMemFree(reinterpret_cast<CUdeviceptr>(block));
  if (d.stream)
    d.cuStreamDestroy(d.stream);
  if (d.context)
    d.cuDevicePrimaryCtxRelease(d.device);
  // The library stays loaded: a destructor of the generated code may still
  // unload its modules through it.
}

void *CudaDevice::allocateDevice(uint64_t bytes) {
  CUdeviceptr pointer = 0;
  if (driver->cuMemAlloc(&pointer, bytes ? bytes : 1) != kSuccess)
    return nullptr;
  return reinterpret_cast<void *>(pointer);
}

void *CudaDevice::allocateManaged(uint64_t bytes) {
  Driver &d = *driver;
  uint64_t size = poolSize(bytes);
  std::lock_guard<std::mutex> lock(d.poolMutex);
  if (auto it = d.freeBlocks.find(size); it != d.freeBlocks.end()) {
    void *block = it->second;
    d.freeBlocks.erase(it);
    return block;
  }
  CUdeviceptr pointer = 0;
  if (d.cuMemAllocManaged(&pointer, size, kAttachGlobal) != kSuccess)
    return nullptr;
  void *block = reinterpret_cast<void *>(pointer);
  d.blockBytes[block] = size;
  d.managedBytes += size;
  return block;
}

void CudaDevice::free(void *pointer) {
  if (!pointer)
    return;
  Driver &d = *driver;
  std::lock_guard<std::mutex> lock(d.poolMutex);
  // A managed block goes back to the pool: a launch still reading it runs
  // before any later one that gets it (one stream), and the host touches a
  // buffer only after waiting for the device.
  if (auto it = d.blockBytes.find(pointer); it != d.blockBytes.end()) {
    d.freeBlocks.emplace(it->second, pointer);
    return;
  }
  d.cuStreamSynchronize(d.stream);
  d.cuMemFree(reinterpret_cast<CUdeviceptr>(pointer));
}

llvm::Error CudaDevice::copy(void *dst, const void *src, uint64_t bytes) {
  Driver &d = *driver;
  if (CUresult r =
          d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                          reinterpret_cast<CUdeviceptr>(src), bytes, d.stream);
      r != kSuccess)
    return makeError(ErrorId::CudaCallFailed,
                     "copying " + formatBytes(bytes) +
                         " to the GPU failed: " + d.describe(r));
  return llvm::Error::success();
}

llvm::Error CudaDevice::synchronize() {
  Driver &d = *driver;
  if (CUresult r = d.cuStreamSynchronize(d.stream); r != kSuccess)
    return makeError(ErrorId::CudaCallFailed,
                     "the GPU failed running the model: " + d.describe(r));
  return llvm::Error::success();
}

void CudaDevice::makeCurrent(CudaDevice *device) {
  current = device;
  if (!device) {
    setGeneratedCodeAllocator(nullptr, nullptr);
    return;
  }
  setGeneratedCodeAllocator(
      [](uint64_t bytes) { return current->allocateManaged(bytes); },
      [](void *pointer) { current->free(pointer); });
}

//===----------------------------------------------------------------------===//
// What generated code calls: the `mgpu*` ABI (MLIR22_NOTES section 4).
//===----------------------------------------------------------------------===//

extern "C" {

void *mgpuModuleLoad(void *blob, int64_t bytes) {
  auto *module = new CudaDevice::Module;
  module->blob = blob;
  module->bytes = uint64_t(bytes);
  return module;
}

void mgpuModuleUnload(void *module) {
  auto *m = static_cast<CudaDevice::Module *>(module);
  // The driver may give its kernels' handles to another module's.
  for (const auto &function : m->functions) {
    kernelNames().erase(function.second);
    chainedKernels().erase(function.second);
  }
  if (m->loaded && current)
    current->api().cuModuleUnload(m->loaded);
  delete m;
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  CudaDevice &device = currentDevice("mgpuModuleGetFunction");
  auto *m = static_cast<CudaDevice::Module *>(module);
  auto &d = device.api();
  if (!m->loaded)
    if (CUresult r = d.cuModuleLoadData(&m->loaded, m->blob); r != kSuccess)
      failCall("loading the cubin of kernel ", name, r);
  auto [it, inserted] = m->functions.try_emplace(name, nullptr);
  if (!inserted)
    return it->second;
  if (CUresult r = d.cuModuleGetFunction(&it->second, m->loaded, name);
      r != kSuccess)
    failCall("finding kernel ", name, r, " in its cubin");
  CUfunction function = it->second;
  kernelNames()[function] = it->first().data();
  // A chained kernel's module has its grid counter (linnet-cuda-lower-grid-
  // waits). A C array: failCall's unwinding would skip a string's
  // destructor.
  char counterName[1024];
  int length =
      std::snprintf(counterName, sizeof(counterName), "%s_grid_arrivals", name);
  if (length < 0 || size_t(length) >= sizeof(counterName))
    failGeneratedCall(ErrorId::CudaCallFailed, [&] {
      return std::string("the name of kernel `") + name + "` is too long";
    });
  CUdeviceptr counter = 0;
  size_t counterBytes = 0;
  CUresult found =
      d.cuModuleGetGlobal(&counter, &counterBytes, m->loaded, counterName);
  if (found == kSuccess)
    chainedKernels()[function] = 0;
  else if (found == kNotFound)
    chainedKernels().erase(function);
  else
    failCall("looking for the grid counter of kernel ", name, found);
  return function;
}

// The plan runs on one stream; the host waits only where
// linnet-cuda-plan-host put `linnet_device_synchronize`.
void *mgpuStreamCreate() {
  return currentDevice("mgpuStreamCreate").api().stream;
}
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *) {}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, void *stream,
                      void **params, void **extra, int64_t) {
  auto &d = currentDevice("mgpuLaunchKernel").api();
  auto describeLaunch = [&](intptr_t blocks, const char *how = "") {
    const char *name = kernelNames().lookup(static_cast<CUfunction>(function));
    return (llvm::Twine("launching kernel `") + (name ? name : "?") + "` (" +
            llvm::Twine(blocks) + " blocks of " + llvm::Twine(blockX) +
            " threads" + how + ") failed: ")
        .str();
  };
  auto chained = chainedKernels().find(static_cast<CUfunction>(function));
  if (chained != chainedKernels().end()) {
    // Its blocks wait for each other: all must be resident at once.
    unsigned &resident = chained->second;
    if (resident == 0) {
      int perMultiprocessor = 0, multiprocessors = 0, cooperative = 0;
      CUresult r = d.cuDeviceGetAttribute(&multiprocessors,
                                          kMultiprocessorCount, d.device);
      if (r == kSuccess)
        r = d.cuDeviceGetAttribute(&cooperative, kCooperativeLaunch, d.device);
      if (r == kSuccess)
        r = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &perMultiprocessor, static_cast<CUfunction>(function), int(blockX),
            size_t(sharedBytes));
      if (r != kSuccess || perMultiprocessor <= 0 || !cooperative)
        failGeneratedCall(ErrorId::CudaCallFailed, [&] {
          return describeLaunch(gridX, ", cooperatively") +
                 (r != kSuccess ? d.describe(r)
                  : !cooperative
                      ? std::string("this GPU cannot launch a kernel "
                                    "cooperatively, and its blocks wait "
                                    "for each other")
                      : std::string("not one block of it fits on a "
                                    "multiprocessor"));
        });
      resident = unsigned(perMultiprocessor) * unsigned(multiprocessors);
    }
    unsigned blocks = std::min(unsigned(gridX), resident);
    if (CUresult r = d.cuLaunchCooperativeKernel(
            static_cast<CUfunction>(function), blocks, unsigned(gridY),
            unsigned(gridZ), unsigned(blockX), unsigned(blockY),
            unsigned(blockZ), unsigned(sharedBytes),
            static_cast<CUstream>(stream), params);
        r != kSuccess)
      failGeneratedCall(ErrorId::CudaCallFailed, [&] {
        return describeLaunch(blocks, ", cooperatively") + d.describe(r);
      });
    return;
  }
  if (CUresult r = d.cuLaunchKernel(
          static_cast<CUfunction>(function), unsigned(gridX), unsigned(gridY),
          unsigned(gridZ), unsigned(blockX), unsigned(blockY), unsigned(blockZ),
          unsigned(sharedBytes), static_cast<CUstream>(stream), params, extra);
      r != kSuccess)
    failGeneratedCall(ErrorId::CudaCallFailed,
                      [&] { return describeLaunch(gridX) + d.describe(r); });
}

void *mgpuMemAlloc(uint64_t bytes, void *, bool) {
  void *block = currentDevice("mgpuMemAlloc").allocateManaged(bytes);
  if (!block)
    failGeneratedCall(ErrorId::OutOfMemory, [&] {
      return "out of memory: the GPU has no " + formatBytes(bytes) +
             " left for an intermediate result";
    });
  return block;
}

void mgpuMemFree(void *pointer, void *) {
  currentDevice("mgpuMemFree").free(pointer);
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *) {
  CudaDevice &device = currentDevice("mgpuMemcpy");
  if (llvm::Error error = device.copy(dst, src, bytes))
    failCall(std::move(error));
}

void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream) {
  auto &d = currentDevice("mgpuMemset32").api();
  if (CUresult r = d.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, static_cast<CUstream>(stream));
      r != kSuccess)
    failCall("filling a buffer on the GPU", nullptr, r);
}

void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream) {
  auto &d = currentDevice("mgpuMemset16").api();
  if (CUresult r = d.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                      count, static_cast<CUstream>(stream));
      r != kSuccess)
    failCall("filling a buffer on the GPU", nullptr, r);
}

void linnet_device_synchronize() {
  CudaDevice &device = currentDevice("linnet_device_synchronize");
  if (llvm::Error error = device.synchronize())
    failCall(std::move(error));
}

} // extern "C"

std::vector<std::pair<const char *, void *>>
CudaDevice::generatedCodeSymbols() {
  auto symbols = linnet::generatedCodeSymbols();
  auto add = [&](const char *name, auto *function) {
    symbols.emplace_back(name, reinterpret_cast<void *>(function));
  };
  add("mgpuModuleLoad", &mgpuModuleLoad);
  add("mgpuModuleUnload", &mgpuModuleUnload);
  add("mgpuModuleGetFunction", &mgpuModuleGetFunction);
  add("mgpuStreamCreate", &mgpuStreamCreate);
  add("mgpuStreamDestroy", &mgpuStreamDestroy);
  add("mgpuStreamSynchronize", &mgpuStreamSynchronize);
  add("mgpuLaunchKernel", &mgpuLaunchKernel);
  add("mgpuMemAlloc", &mgpuMemAlloc);
  add("mgpuMemFree", &mgpuMemFree);
  add("mgpuMemcpy", &mgpuMemcpy);
  add("mgpuMemset32", &mgpuMemset32);
  add("mgpuMemset16", &mgpuMemset16);
  add("linnet_device_synchronize", &linnet_device_synchronize);
  return symbols;
}

//===- CpuExecutable.cpp - in-process compilation of CPU code -------------===//
//
// Links compileObjects' objects (for this machine's CPU and its features)
// into this process with LLVM's ORC JIT (LLJIT), with what CPU code from the
// linnet pipeline needs at run time: the OpenMP runtime, the runtime's
// functions, and the memref descriptor ABI of the `_mlir_ciface_` entry
// points. Objects, not IR, so that they can come from the compile cache.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CpuExecutable.h"

#include "linnet/Basic/Errors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace linnet {

//===----------------------------------------------------------------------===//
// MemRefDescriptor
//===----------------------------------------------------------------------===//

MemRefDescriptor MemRefDescriptor::forData(void *data,
                                           llvm::ArrayRef<int64_t> shape) {
  MemRefDescriptor desc(shape.size());
  int64_t word = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
  desc.words[0] = word;
  desc.words[1] = word;
  desc.words[2] = 0;
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    desc.words[3 + i] = shape[i];
    desc.words[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return desc;
}

MemRefDescriptor MemRefDescriptor::forResult(unsigned rank) {
  return MemRefDescriptor(rank);
}

int64_t MemRefDescriptor::numElements() const {
  int64_t n = 1;
  for (int64_t size : sizes())
    n *= size;
  return n;
}

void MemRefDescriptor::freeResult(llvm::ArrayRef<MemRefDescriptor> inputs) {
  void *base = basePtr();
  if (!base)
    return;
  bool ownedByCaller = llvm::any_of(
      inputs, [&](const MemRefDescriptor &in) { return in.basePtr() == base; });
  if (!ownedByCaller)
    std::free(base);
  words[0] = words[1] = 0;
}

//===----------------------------------------------------------------------===//
// Runtime libraries
//===----------------------------------------------------------------------===//

namespace {

std::optional<std::string> firstExisting(llvm::ArrayRef<std::string> paths) {
  for (const std::string &path : paths)
    if (!path.empty() && llvm::sys::fs::exists(path))
      return path;
  return std::nullopt;
}

std::string llvmLibraryPath(llvm::StringRef file) {
  llvm::SmallString<128> path(LINNET_LLVM_LIBRARY_DIR);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

} // namespace

llvm::Expected<std::string> findOpenMPRuntime() {
  llvm::SmallVector<std::string> candidates;
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("LINNET_LIBOMP"))
    candidates.push_back(*env);
  candidates.push_back(llvmLibraryPath("libomp.so"));
  candidates.push_back(llvmLibraryPath("libomp.so.5"));
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libomp.so.5");
  if (std::optional<std::string> found = firstExisting(candidates))
    return *found;
  return makeError(
      ErrorId::OpenMPRuntimeMissing,
      "the OpenMP runtime was not found (looked at $LINNET_LIBOMP, " +
          llvmLibraryPath("libomp.so") +
          ", /usr/lib/x86_64-linux-gnu/libomp.so.5); install libomp-22-dev");
}

//===----------------------------------------------------------------------===//
// CpuExecutable
//===----------------------------------------------------------------------===//

CpuExecutable::CpuExecutable(std::unique_ptr<llvm::orc::LLJIT> jit, bool cached)
    : jit(std::move(jit)), cached(cached) {}

CpuExecutable::~CpuExecutable() {
  if (destructors)
    destructors();
}

llvm::Expected<std::unique_ptr<CpuExecutable>>
CpuExecutable::compile(ModuleOp module, const CpuCompileOptions &options) {
  initializeNativeTarget();
  llvm::Expected<std::string> openmp = findOpenMPRuntime();
  if (!openmp)
    return openmp.takeError();
  llvm::SmallVector<std::string> libraries = {*openmp};
  if (std::optional<std::string> runnerUtils =
          firstExisting({llvmLibraryPath("libmlir_c_runner_utils.so")}))
    libraries.push_back(*runnerUtils);
  llvm::append_range(libraries, options.sharedLibPaths);

  ObjectCodeOptions objectOptions;
  objectOptions.cpu = "native";
  // One object: the JIT links each object apart, maybe gigabytes from the
  // others (seen under ASan), and a split module's parts reach each other's
  // hidden symbols by 32-bit displacements.
  objectOptions.parts = 1;
  objectOptions.optLevel = options.optLevel;
  objectOptions.cache = options.cache;
  objectOptions.initializerFunctions = true;
  llvm::Expected<ObjectCode> code = compileObjects(module, objectOptions);
  if (!code)
    return code.takeError();

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().create();
  if (!jit)
    return jit.takeError();
  llvm::orc::JITDylib &library = (*jit)->getMainJITDylib();
  char prefix = (*jit)->getDataLayout().getGlobalPrefix();
  // Symbols resolve against this process (libc, libm), the runtime's
  // functions given by address, then the OpenMP runtime and the others.
  llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>>
      process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          prefix);
  if (!process)
    return process.takeError();
  library.addGenerator(std::move(*process));
  for (const std::string &path : libraries) {
    llvm::Expected<std::unique_ptr<llvm::orc::DynamicLibrarySearchGenerator>>
        loaded = llvm::orc::DynamicLibrarySearchGenerator::Load(path.c_str(),
                                                                prefix);
    if (!loaded)
      return withContext("cannot load `" + path + "`: ", loaded.takeError());
    library.addGenerator(std::move(*loaded));
  }
  if (!options.symbols.empty()) {
    llvm::orc::MangleAndInterner intern((*jit)->getExecutionSession(),
                                        (*jit)->getDataLayout());
    llvm::orc::SymbolMap map;
    for (const auto &[name, address] : options.symbols)
      map[intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                           llvm::JITSymbolFlags::Exported};
    if (llvm::Error error = library.define(llvm::orc::absoluteSymbols(map)))
      return std::move(error);
  }
  for (std::unique_ptr<llvm::MemoryBuffer> &object : code->objects)
    if (llvm::Error error = (*jit)->addObjectFile(std::move(object)))
      return std::move(error);
  auto executable = std::unique_ptr<CpuExecutable>(
      new CpuExecutable(std::move(*jit), code->fromCache));
  // The module's constructors (the GPU target's load its kernels) run now,
  // its destructors with the executable's.
  llvm::Expected<void *> constructors =
      executable->lookup("_linnet_constructors");
  if (!constructors)
    return constructors.takeError();
  llvm::Expected<void *> destructors =
      executable->lookup("_linnet_destructors");
  if (!destructors)
    return destructors.takeError();
  reinterpret_cast<void (*)()>(*constructors)();
  executable->destructors = reinterpret_cast<void (*)()>(*destructors);
  return executable;
}

llvm::Error CpuExecutable::invokePacked(llvm::StringRef cifaceName,
                                        llvm::MutableArrayRef<void *> args) {
  llvm::Expected<void (*)(void **)> function = lookupPacked(cifaceName);
  if (!function)
    return function.takeError();
  (*function)(args.data());
  return llvm::Error::success();
}

llvm::Expected<void (*)(void **)>
CpuExecutable::lookupPacked(llvm::StringRef cifaceName) const {
  std::string name = cifaceName.str();
  if (!cifaceName.starts_with("_mlir_ciface_"))
    name = "_mlir_ciface_" + name;
  // compileObjects' wrapper of `_mlir_ciface_f` is `_linnet_packed_f`.
  llvm::Expected<void *> address =
      lookup("_linnet_packed_" + name.substr(strlen("_mlir_ciface_")));
  if (!address)
    return address.takeError();
  return reinterpret_cast<void (*)(void **)>(*address);
}

llvm::Error
CpuExecutable::invoke(llvm::StringRef name,
                      llvm::MutableArrayRef<MemRefDescriptor> results,
                      llvm::MutableArrayRef<MemRefDescriptor> args) {
  // Several results come back as one struct of descriptors, laid out one
  // after the other (every field is 8 bytes, so there is no padding).
  llvm::SmallVector<int64_t> resultWords;
  for (MemRefDescriptor &result : results)
    llvm::append_range(resultWords, result.words);

  llvm::SmallVector<void *> pointers;
  if (results.size() == 1)
    pointers.push_back(results.front().abiStruct());
  else if (results.size() > 1)
    pointers.push_back(resultWords.data());
  for (MemRefDescriptor &arg : args)
    pointers.push_back(arg.abiStruct());
  llvm::SmallVector<void *> packed;
  for (void *&pointer : pointers)
    packed.push_back(&pointer);

  if (llvm::Error error = invokePacked(name, packed))
    return error;

  if (results.size() > 1) {
    size_t position = 0;
    for (MemRefDescriptor &result : results) {
      std::copy_n(resultWords.begin() + position, result.words.size(),
                  result.words.begin());
      position += result.words.size();
    }
  }
  return llvm::Error::success();
}

llvm::Expected<void *> CpuExecutable::lookup(llvm::StringRef symbol) const {
  llvm::Expected<llvm::orc::ExecutorAddr> address = jit->lookup(symbol);
  if (!address)
    return address.takeError();
  return address->toPtr<void *>();
}

} // namespace linnet

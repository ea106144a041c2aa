//===- CpuExecutable.cpp - in-process compilation of CPU code -------------===//
//
// Wraps mlir::ExecutionEngine with what CPU code from the linnet pipeline
// needs at run time: the OpenMP runtime, O3 with the host's CPU features, and
// the memref descriptor ABI of the `_mlir_ciface_` entry points.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CpuExecutable.h"

#include "linnet/Basic/Errors.h"

#include "LlvmOptimizer.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
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

CpuExecutable::CpuExecutable(std::unique_ptr<ExecutionEngine> engine)
    : engine(std::move(engine)) {}

CpuExecutable::~CpuExecutable() = default;

llvm::Expected<std::unique_ptr<CpuExecutable>>
CpuExecutable::compile(ModuleOp module, const CpuCompileOptions &options) {
  initializeNativeTarget();
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::Expected<std::string> openmp = findOpenMPRuntime();
  if (!openmp)
    return openmp.takeError();
  llvm::SmallVector<std::string> libraries = {*openmp};
  if (std::optional<std::string> runnerUtils =
          firstExisting({llvmLibraryPath("libmlir_c_runner_utils.so")}))
    libraries.push_back(*runnerUtils);
  llvm::append_range(libraries, options.sharedLibPaths);
  llvm::SmallVector<llvm::StringRef> libraryRefs(libraries.begin(),
                                                 libraries.end());

  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  llvm::CodeGenOptLevel codeGenLevel =
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
      : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                              : llvm::CodeGenOptLevel::None;
  builder->setCodeGenOptLevel(codeGenLevel);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> targetMachine =
      builder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  auto transformer = makeLlvmOptimizer(options.optLevel, targetMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = codeGenLevel;
  engineOptions.sharedLibPaths = libraryRefs;
  llvm::Expected<std::unique_ptr<ExecutionEngine>> engine =
      ExecutionEngine::create(module, engineOptions, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  if (!options.symbols.empty())
    (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap map;
      for (const auto &[name, address] : options.symbols)
        map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
      return map;
    });
  (*engine)->initialize();
  return std::unique_ptr<CpuExecutable>(new CpuExecutable(std::move(*engine)));
}

llvm::Error CpuExecutable::invokePacked(llvm::StringRef cifaceName,
                                        llvm::MutableArrayRef<void *> args) {
  std::string name = cifaceName.str();
  if (!cifaceName.starts_with("_mlir_ciface_"))
    name = "_mlir_ciface_" + name;
  return engine->invokePacked(name, args);
}

llvm::Expected<void (*)(void **)>
CpuExecutable::lookupPacked(llvm::StringRef cifaceName) const {
  std::string name = cifaceName.str();
  if (!cifaceName.starts_with("_mlir_ciface_"))
    name = "_mlir_ciface_" + name;
  return engine->lookupPacked(name);
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
  return engine->lookup(symbol);
}

} // namespace linnet

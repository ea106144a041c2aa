//===- ObjectFile.cpp - CPU code as relocatable object files --------------===//
//
// The module the JIT runs and the one a build links, translated to LLVM IR,
// optimized and emitted as position-independent objects (for a generic
// x86-64 level for a build, so that a binary linked from them runs on
// machines other than the build machine; for this machine for the JIT), or
// read from the compile cache. Every C-interface function `_mlir_ciface_f`
// gets a packed wrapper `void _linnet_packed_f(void **args)` (args[i] points
// at parameter i's value, a non-void result is stored through the last), the
// convention of mlir::ExecutionEngine's wrappers, so that a runtime calls any
// entry the same way whether it was compiled in process or ahead of time.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CompileCache.h"
#include "linnet/Target/CPU/CpuExecutable.h"

#include "linnet/Basic/Errors.h"
#include "linnet/Basic/OutputFile.h"

#include "LlvmOptimizer.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <mutex>
#include <thread>

using namespace mlir;

namespace linnet {

/// Adds `_linnet_packed_f` for every defined `_mlir_ciface_f` of `module`.
static void addPackedWrappers(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::SmallVector<llvm::Function *> interfaces;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with("_mlir_ciface_"))
      interfaces.push_back(&function);
  llvm::Type *pointer = llvm::PointerType::getUnqual(context);
  for (llvm::Function *interface : interfaces) {
    std::string name =
        "_linnet_packed_" +
        interface->getName().drop_front(strlen("_mlir_ciface_")).str();
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                         {pointer}, /*isVarArg=*/false);
    auto *wrapper = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, name, module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", wrapper));
    llvm::Value *packed = wrapper->getArg(0);
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : interface->args()) {
      llvm::Value *slot =
          builder.CreateConstGEP1_64(pointer, packed, uint64_t(arg.getArgNo()));
      llvm::Value *address = builder.CreateLoad(pointer, slot);
      args.push_back(builder.CreateLoad(arg.getType(), address));
    }
    llvm::Value *result = builder.CreateCall(interface, args);
    if (!result->getType()->isVoidTy()) {
      llvm::Value *slot =
          builder.CreateConstGEP1_64(pointer, packed, uint64_t(args.size()));
      builder.CreateStore(result, builder.CreateLoad(pointer, slot));
    }
    builder.CreateRetVoid();
  }
}

/// Replaces `module`'s `llvm.global_ctors` and `llvm.global_dtors` by the
/// functions `_linnet_constructors` and `_linnet_destructors`, which call
/// them in priority order (destructors in reverse), for CpuExecutable to
/// call: a JIT without ORC's runtime runs no `.init_array` (the GPU target's
/// constructors load its modules).
static void addInitializerFunctions(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto gather = [&](llvm::StringRef list, llvm::StringRef name, bool reverse) {
    llvm::SmallVector<std::pair<unsigned, llvm::Function *>> calls;
    if (llvm::GlobalVariable *global = module.getNamedGlobal(list)) {
      for (llvm::orc::CtorDtorIterator::Element entry :
           list == "llvm.global_ctors" ? llvm::orc::getConstructors(module)
                                       : llvm::orc::getDestructors(module))
        if (entry.Func)
          calls.push_back({entry.Priority, entry.Func});
      global->eraseFromParent();
    }
    llvm::stable_sort(calls, [&](const auto &a, const auto &b) {
      return reverse ? a.first > b.first : a.first < b.first;
    });
    auto *function = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
        llvm::GlobalValue::ExternalLinkage, name, module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", function));
    for (const auto &[priority, callee] : calls)
      builder.CreateCall(callee->getFunctionType(), callee);
    builder.CreateRetVoid();
  };
  gather("llvm.global_ctors", "_linnet_constructors", /*reverse=*/false);
  gather("llvm.global_dtors", "_linnet_destructors", /*reverse=*/true);
}

/// Puts each fatbinary of the CUDA target's kernels (a constant whose bytes
/// start with the fatbinary's magic number) in `.nv_fatbin`, aligned as
/// nvcc aligns it, where the toolkit's `cuobjdump` finds the kernels.
static void placeGpuBinaries(llvm::Module &module) {
  constexpr llvm::StringLiteral fatbinMagic("\x50\xED\x55\xBA");
  for (llvm::GlobalVariable &global : module.globals()) {
    auto *bytes = llvm::dyn_cast_or_null<llvm::ConstantDataSequential>(
        global.hasInitializer() ? global.getInitializer() : nullptr);
    if (!global.isConstant() || !bytes || !bytes->isString() ||
        !bytes->getRawDataValues().starts_with(fatbinMagic))
      continue;
    global.setSection(".nv_fatbin");
    global.setAlignment(llvm::Align(8));
  }
}

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// `native` is this machine's CPU, as for clang's `-march=native`.
static llvm::StringRef resolveCpu(llvm::StringRef cpu) {
  return cpu == "native" ? llvm::sys::getHostCPUName() : cpu;
}

/// The features to generate code for beyond `cpu`'s own: for `native`,
/// every feature this machine reports, on or off. The name alone is not
/// enough: a virtual machine may report a CPU model (say `rocketlake`)
/// together with features that model lacks (AVX512-BF16), and the pipeline
/// chooses instructions by the features.
static std::string featuresOf(llvm::StringRef cpu) {
  if (cpu != "native")
    return "";
  llvm::SubtargetFeatures features;
  for (const llvm::StringMapEntry<bool> &feature :
       llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.getKey(), feature.getValue());
  return features.getString();
}

/// The subtarget of `cpu` (`native` resolved) for this machine's triple, or
/// why there is none. The name is checked on a generic subtarget first, since
/// creating one for an unknown CPU name prints a warning.
static llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>>
subtargetOf(llvm::StringRef cpu) {
  initializeNativeTarget();
  std::string features = featuresOf(cpu);
  cpu = resolveCpu(cpu);
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError(ErrorId::TargetFailed,
                     "no LLVM target for " + triple.str() + ": " + error);
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!generic || !generic->isCPUStringValid(cpu))
    return makeError(ErrorId::CpuUnknown,
                     "`" + cpu + "` is not a CPU LLVM knows for " +
                         triple.str() + " (for example `x86-64-v3`)");
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, features));
}

llvm::Error checkObjectCpu(llvm::StringRef cpu) {
  llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>> subtarget =
      subtargetOf(cpu);
  return subtarget ? llvm::Error::success() : subtarget.takeError();
}

/// Whether the code generated for `cpu` (`native`: with the host's reported
/// features) may use `feature`.
static bool cpuHasFeature(llvm::StringRef cpu, llvm::StringRef feature) {
  llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>> subtarget =
      subtargetOf(cpu);
  if (!subtarget) {
    llvm::consumeError(subtarget.takeError());
    return false;
  }
  return *subtarget && (*subtarget)->checkFeatures(("+" + feature).str());
}

bool cpuHasBf16DotProducts(llvm::StringRef cpu) {
  return cpuHasFeature(cpu, "avx512bf16");
}

CpuPipelineOptions cpuPipelineOptionsFor(llvm::StringRef cpu) {
  CpuPipelineOptions options;
  options.bf16DotProducts = cpuHasBf16DotProducts(cpu);
  if (cpuHasFeature(cpu, "avx512f"))
    return options; // The defaults: 32 registers of 16 f32 lanes.
  // 16 registers of 8 lanes (AVX2) or 4 (SSE): register tiles whose
  // accumulators and operand vectors fit in them (the AVX-512 tiles spill:
  // a 4x4x16 dot-product tile alone is 32 accumulator registers).
  int64_t lanes = cpuHasFeature(cpu, "avx") ? 8 : 4;
  options.dotProductRegisterTile = {2, 4, lanes};   // 8 + 6 registers
  options.contractionRegisterTile = {4, 2 * lanes}; // 8 + 3 registers
  return options;
}

/// The object code of `module` (optimized) for `cpu`.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
emitObject(llvm::Module &module, const llvm::Target &target,
           llvm::StringRef cpu, llvm::StringRef features,
           llvm::CodeGenOptLevel level) {
  std::unique_ptr<llvm::TargetMachine> machine(target.createTargetMachine(
      module.getTargetTriple(), cpu, features, llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return makeError(ErrorId::TargetFailed,
                     "cannot create a target machine for " + cpu.str());
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return makeError(ErrorId::TargetFailed,
                     "the target cannot emit object files");
  codegen.run(module);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(
      std::move(bytes), module.getModuleIdentifier(),
      /*RequiresNullTerminator=*/false);
}

/// The compile cache's key of `module` (translated, not yet optimized) as
/// `options` compiles it.
static std::string cacheKey(const llvm::Module &module, llvm::StringRef cpu,
                            llvm::StringRef features,
                            const ObjectCodeOptions &options) {
  llvm::SmallString<0> bitcode;
  llvm::raw_svector_ostream os(bitcode);
  llvm::WriteBitcodeToFile(module, os);
  llvm::BLAKE3 hash;
  hash.update(llvm::arrayRefFromStringRef(bitcode));
  std::string settings =
      (llvm::Twine("linnet-objects-1|") + LLVM_VERSION_STRING + "|" + cpu +
       "|" + features + "|O" + llvm::Twine(options.optLevel) + "|" +
       llvm::Twine(options.parts) + "|" + llvm::Twine(options.gpuBinarySection))
          .str();
  hash.update(settings);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

llvm::Expected<ObjectCode> compileObjects(ModuleOp module,
                                          const ObjectCodeOptions &options) {
  unsigned optLevel = std::min(options.optLevel, 3u);
  llvm::CodeGenOptLevel level =
      llvm::CodeGenOpt::getLevel(int(optLevel))
          .value_or(llvm::CodeGenOptLevel::Aggressive);
  llvm::StringRef cpu = options.cpu;
  if (llvm::Error error = checkObjectCpu(cpu))
    return std::move(error);
  std::string features = featuresOf(cpu);
  cpu = resolveCpu(cpu);
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError(ErrorId::TargetFailed,
                     "cannot translate the CPU module to LLVM IR "
                     "(is it at CpuStage::LLVM?)");

  addPackedWrappers(*llvmModule);
  if (options.gpuBinarySection)
    placeGpuBinaries(*llvmModule);
  if (options.initializerFunctions)
    addInitializerFunctions(*llvmModule);

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError(ErrorId::TargetFailed,
                     "no LLVM target for " + triple.str() + ": " + error);
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpu, features, llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return makeError(ErrorId::TargetFailed,
                     "cannot create a target machine for " + cpu.str());
  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  machine.get());
  unsigned parts = std::max(options.parts, 1u);
  std::string key;
  if (options.cache) {
    key = cacheKey(*llvmModule, cpu, features, options);
    if (auto objects = options.cache->lookup(key, parts))
      return ObjectCode{std::move(*objects), /*fromCache=*/true};
  }
  if (llvm::Error optimizeError =
          makeLlvmOptimizer(optLevel, machine.get())(llvmModule.get()))
    return std::move(optimizeError);

  ObjectCode code;
  if (parts == 1) {
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
        emitObject(*llvmModule, *target, cpu, features, level);
    if (!object)
      return object.takeError();
    code.objects.push_back(std::move(*object));
  } else {
    // Code generation, most of the time, runs in parallel: the optimized
    // module is split into linkable parts (functions dealt out in turn), each
    // carried as bitcode into its own LLVMContext and thread.
    std::vector<llvm::SmallString<0>> bitcode;
    llvm::SplitModule(
        *llvmModule, parts,
        [&](std::unique_ptr<llvm::Module> part) {
          bitcode.emplace_back();
          llvm::raw_svector_ostream os(bitcode.back());
          llvm::WriteBitcodeToFile(*part, os);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    std::vector<llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>> objects;
    for (size_t i = 0; i < bitcode.size(); ++i)
      objects.emplace_back(nullptr);
    {
      std::vector<std::thread> threads;
      for (size_t i = 0; i < bitcode.size(); ++i)
        threads.emplace_back([&, i] {
          llvm::LLVMContext context;
          llvm::Expected<std::unique_ptr<llvm::Module>> part =
              llvm::parseBitcodeFile(
                  llvm::MemoryBufferRef(
                      llvm::StringRef(bitcode[i].data(), bitcode[i].size()),
                      "part"),
                  context);
          llvm::consumeError(objects[i].takeError());
          objects[i] =
              part ? emitObject(**part, *target, cpu, features, level)
                   : llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>(
                         part.takeError());
        });
      for (std::thread &thread : threads)
        thread.join();
    }
    llvm::Error all = llvm::Error::success();
    for (auto &object : objects) {
      if (object)
        code.objects.push_back(std::move(*object));
      else
        all = llvm::joinErrors(std::move(all), object.takeError());
    }
    if (all)
      return std::move(all);
  }
  // The cache saves time and is no output: a failure to keep the objects
  // costs the next compile only.
  if (options.cache && code.objects.size() == parts)
    llvm::consumeError(options.cache->store(key, code.objects));
  return code;
}

llvm::Expected<std::vector<std::string>>
writeObjectFiles(ModuleOp module, llvm::StringRef directory,
                 llvm::StringRef cpu, unsigned parts, unsigned optLevel,
                 CompileCache *cache) {
  ObjectCodeOptions options;
  options.cpu = cpu.str();
  options.parts = parts;
  options.optLevel = optLevel;
  options.gpuBinarySection = true;
  options.cache = cache;
  llvm::Expected<ObjectCode> code = compileObjects(module, options);
  if (!code)
    return code.takeError();
  std::vector<std::string> paths;
  for (const std::unique_ptr<llvm::MemoryBuffer> &object : code->objects) {
    llvm::SmallString<256> file(directory);
    llvm::sys::path::append(file,
                            "model." + std::to_string(paths.size()) + ".o");
    if (llvm::Error error =
            writeOutputFile(file, [&](llvm::raw_pwrite_stream &os) {
              os << object->getBuffer();
            }))
      return std::move(error);
    paths.push_back(std::string(file));
  }
  return paths;
}

} // namespace linnet

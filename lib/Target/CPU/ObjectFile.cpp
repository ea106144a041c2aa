//===- ObjectFile.cpp - CPU code as a relocatable object file -------------===//
//
// The ahead-of-time path: the module the JIT would run, translated to LLVM IR,
// optimized and emitted as a position-independent object for a generic x86-64
// level, so that a binary linked from it runs on machines other than the
// build machine.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/CpuExecutable.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

using namespace mlir;

namespace linnet {

llvm::Error writeObjectFile(ModuleOp module, llvm::StringRef path,
                            llvm::StringRef cpu) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return llvm::createStringError("cannot translate the CPU module to LLVM IR "
                                   "(is it at CpuStage::LLVM?)");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple.str() + ": " +
                                   error);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, /*Features=*/"", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   cpu.str());
  ExecutionEngine::setupTargetTripleAndDataLayout(llvmModule.get(),
                                                  machine.get());
  if (llvm::Error optimizeError = makeOptimizingTransformer(
          /*optLevel=*/3, /*sizeLevel=*/0, machine.get())(llvmModule.get()))
    return optimizeError;

  std::error_code ec;
  llvm::ToolOutputFile output(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot open " + path.str());
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, output.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  codegen.run(*llvmModule);
  output.keep();
  return llvm::Error::success();
}

} // namespace linnet

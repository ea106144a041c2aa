//===- LlvmOptimizer.cpp - LLVM's optimization pipeline for the CPU -------===//

#include "LlvmOptimizer.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

std::function<llvm::Error(llvm::Module *)>
linnet::makeLlvmOptimizer(unsigned optLevel, llvm::TargetMachine *machine) {
  return [optLevel, machine](llvm::Module *module) -> llvm::Error {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PassInstrumentationCallbacks callbacks;
    callbacks.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "CalledValuePropagationPass";
        });
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder builder(machine, tuning, std::nullopt, &callbacks);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    llvm::OptimizationLevel level =
        optLevel >= 3   ? llvm::OptimizationLevel::O3
        : optLevel == 2 ? llvm::OptimizationLevel::O2
        : optLevel == 1 ? llvm::OptimizationLevel::O1
                        : llvm::OptimizationLevel::O0;
    llvm::ModulePassManager pipeline =
        builder.buildPerModuleDefaultPipeline(level);
    pipeline.run(*module, modules);
    return llvm::Error::success();
  };
}

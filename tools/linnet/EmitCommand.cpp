//===- EmitCommand.cpp - `linnet emit` ------------------------------------===//
//
// Prints a bound model's MLIR at one stage of lowering: what IR generation
// produced (`linnet`), after the linnet ops become linalg (`linalg`), the
// CPU target's bufferized loops (`loops`), or the LLVM dialect (`llvm`).
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "linnet/Basic/OutputFile.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/FileSystem.h"

using namespace linnet;
using namespace linnet::driver;
namespace cl = llvm::cl;

cl::SubCommand linnet::driver::emitCommand(
    "emit", "Print the MLIR of a bound model at one stage of lowering");

namespace {

cl::opt<std::string> emitInput(cl::Positional, cl::desc("<file or folder>"),
                               cl::sub(emitCommand), cl::Required);
cl::list<std::string> emitIncludes("I", cl::desc("Add a module search root"),
                                   cl::value_desc("dir"), cl::Prefix,
                                   cl::sub(emitCommand));
cl::list<std::string>
    emitBindings("bind",
                 cl::desc("Bind root generics: a config.json, or Name=Value "
                          "(repeatable; later ones override)"),
                 cl::value_desc("config.json|Name=Value"),
                 cl::sub(emitCommand));
cl::opt<LoweringStage> emitStage(
    "stage", cl::desc("The stage to print"),
    cl::values(clEnumValN(LoweringStage::Linnet, "linnet",
                          "IR generation: func, linalg, tensor and linnet ops"),
               clEnumValN(LoweringStage::Linalg, "linalg",
                          "linnet ops lowered to linalg, tensor and scf"),
               clEnumValN(LoweringStage::Loops, "loops",
                          "the CPU target's bufferized loops and vectors"),
               clEnumValN(LoweringStage::LLVM, "llvm", "the LLVM dialect"),
               clEnumValN(LoweringStage::Kernels, "kernels",
                          "--target cuda: every dispatch region a GPU kernel"),
               clEnumValN(LoweringStage::Binary, "binary",
                          "--target cuda: a cubin per kernel (ptxas)")),
    cl::init(LoweringStage::Linnet), cl::sub(emitCommand));
cl::list<std::string>
    emitEntries("entry",
                cl::desc("An entry to generate (repeatable; default: all)"),
                cl::value_desc("name"), cl::sub(emitCommand));
cl::opt<std::string>
    emitTarget("target", cl::desc("The target: cpu (the default) or cuda"),
               cl::init("cpu"), cl::sub(emitCommand));
cl::opt<bool> emitDebugInfo("debug-locations",
                            cl::desc("Print the Linnet source locations"),
                            cl::sub(emitCommand));
cl::opt<std::string> emitOutput("o", cl::desc("Write to a file"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::sub(emitCommand));

} // namespace

int linnet::driver::runEmit(const char *argv0) {
  DriverSession session;
  if (!session.load(argv0, emitInput, emitIncludes))
    return 1;
  if (emitBindings.empty())
    return reportError(ErrorId::OptionInvalid,
                       "`emit` needs the model's sizes: give `--bind "
                       "config.json` or `--bind Name=Value` for each generic");
  // No --entry: every entry of the model.
  std::vector<std::string> entries(emitEntries.begin(), emitEntries.end());
  // Code for any CPU of the default level (no instruction set extension the
  // stage's text would depend on).
  bool cudaStage =
      emitStage == LoweringStage::Kernels || emitStage == LoweringStage::Binary;
  std::optional<CudaPipelineOptions> cuda;
  if (emitTarget == "cuda") {
    if (emitStage == LoweringStage::Loops || emitStage == LoweringStage::LLVM)
      return reportError(ErrorId::OptionInvalid,
                         "--target cuda has the stages linnet, linalg, "
                         "kernels and binary, not the CPU's loops and llvm");
    cuda.emplace();
  } else if (emitTarget != "cpu") {
    return reportError(ErrorId::OptionInvalid,
                       "--target: `" + emitTarget +
                           "` is not a target `emit` knows (cpu, cuda)");
  } else if (cudaStage) {
    return reportError(ErrorId::OptionInvalid,
                       "--stage kernels and binary are the CUDA target's: "
                       "give --target cuda");
  }
  CompiledModel compiled;
  if (!compileModel(session, emitBindings, entries, emitStage,
                    CpuPipelineOptions(), compiled, nullptr,
                    cuda ? &*cuda : nullptr))
    return 1;
  mlir::OpPrintingFlags flags;
  if (emitDebugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false)
        .useLocalScope(); // each location inline, not as an alias
  if (llvm::Error error =
          writeOutputFile(emitOutput, [&](llvm::raw_ostream &os) {
            compiled.module->print(os, flags);
          }))
    return reportError(std::move(error));
  return 0;
}
